package server

import "wtd/minimongod/mongoerr"

// checkTransactionFields refuses, as a standalone mongod does, any
// statement of a transaction or retryable write: minimongod is not a
// replica set member, so nothing of it is run.
func checkTransactionFields(req *request) error {
	for _, f := range [...]string{"txnNumber", "startTransaction", "autocommit"} {
		if _, err := req.lookupErr(f); err == nil {
			return mongoerr.New(mongoerr.CodeIllegalOperation, "Transaction numbers are only allowed on a replica set member or mongos")
		}
	}
	return nil
}

// cmdNoReplication answers the replica set commands of a standalone.
func cmdNoReplication(c *clientConn, req *request, dst []byte) ([]byte, error) {
	return nil, mongoerr.New(mongoerr.CodeNoReplicationEnabled, "not running with --replSet")
}

// cmdNoTransaction answers commitTransaction and abortTransaction without
// a transaction number (with one, checkTransactionFields refused it).
func cmdNoTransaction(c *clientConn, req *request, dst []byte) ([]byte, error) {
	return nil, mongoerr.New(mongoerr.CodeIllegalOperation, "Transaction numbers are only allowed on a replica set member or mongos")
}
