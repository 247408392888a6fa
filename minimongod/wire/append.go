package wire

import "hash/crc32"

// appendHeader appends a header with a placeholder length and returns the
// extended slice and the offset at which the message starts.
func appendHeader(dst []byte, requestID, responseTo, opCode int32) ([]byte, int) {
	start := len(dst)
	dst = le.AppendUint32(dst, 0)
	dst = le.AppendUint32(dst, uint32(requestID))
	dst = le.AppendUint32(dst, uint32(responseTo))
	dst = le.AppendUint32(dst, uint32(opCode))
	return dst, start
}

// finish patches the length of the message starting at start.
func finish(dst []byte, start int) []byte {
	le.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}

// finishMsg patches the length of the OP_MSG starting at start and, when
// flags has ChecksumPresent, appends its CRC-32C.
func finishMsg(dst []byte, start int, flags uint32) []byte {
	if flags&ChecksumPresent == 0 {
		return finish(dst, start)
	}
	le.PutUint32(dst[start:], uint32(len(dst)-start+4))
	return le.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// AppendMsg appends an OP_MSG with the given flag bits and a single kind-0
// section holding body, which must be one BSON document. If flags has
// ChecksumPresent, a CRC-32C is appended. It does not allocate when dst has
// enough capacity.
func AppendMsg(dst []byte, requestID, responseTo int32, flags uint32, body []byte) []byte {
	dst, start := appendHeader(dst, requestID, responseTo, OpMsg)
	dst = le.AppendUint32(dst, flags)
	dst = append(dst, 0)
	dst = append(dst, body...)
	return finishMsg(dst, start, flags)
}

// AppendMsgSequences appends an OP_MSG with a kind-0 section holding body
// followed by one kind-1 section per sequence. If flags has
// ChecksumPresent, a CRC-32C is appended.
func AppendMsgSequences(dst []byte, requestID, responseTo int32, flags uint32, body []byte, seqs ...Sequence) []byte {
	dst, start := appendHeader(dst, requestID, responseTo, OpMsg)
	dst = le.AppendUint32(dst, flags)
	dst = append(dst, 0)
	dst = append(dst, body...)
	for _, s := range seqs {
		dst = appendSequence(dst, s)
	}
	return finishMsg(dst, start, flags)
}

// appendSequence appends a kind-1 section.
func appendSequence(dst []byte, s Sequence) []byte {
	dst = append(dst, 1)
	at := len(dst)
	dst = le.AppendUint32(dst, 0)
	dst = append(dst, s.Identifier...)
	dst = append(dst, 0)
	for _, d := range s.Docs {
		dst = append(dst, d...)
	}
	le.PutUint32(dst[at:], uint32(len(dst)-at))
	return dst
}

// AppendReply appends an OP_REPLY, the legacy reply to an OP_QUERY such as
// the initial isMaster handshake, holding docs.
func AppendReply(dst []byte, requestID, responseTo int32, responseFlags int32, cursorID int64, startingFrom int32, docs ...[]byte) []byte {
	dst, start := appendHeader(dst, requestID, responseTo, OpReply)
	dst = le.AppendUint32(dst, uint32(responseFlags))
	dst = le.AppendUint64(dst, uint64(cursorID))
	dst = le.AppendUint32(dst, uint32(startingFrom))
	dst = le.AppendUint32(dst, uint32(len(docs)))
	for _, d := range docs {
		dst = append(dst, d...)
	}
	return finish(dst, start)
}

// AppendQuery appends an OP_QUERY without a field selector, as a client
// sends for the legacy handshake (fullCollectionName "admin.$cmd",
// nreturn -1).
func AppendQuery(dst []byte, requestID int32, flags int32, fullCollectionName string, skip, nreturn int32, query []byte) []byte {
	dst, start := appendHeader(dst, requestID, 0, OpQuery)
	dst = le.AppendUint32(dst, uint32(flags))
	dst = append(dst, fullCollectionName...)
	dst = append(dst, 0)
	dst = le.AppendUint32(dst, uint32(skip))
	dst = le.AppendUint32(dst, uint32(nreturn))
	dst = append(dst, query...)
	return finish(dst, start)
}
