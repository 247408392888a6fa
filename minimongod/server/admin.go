package server

import (
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"wtd/minimongod/mongoerr"
)

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func appendDate(dst []byte, key string, t time.Time) []byte {
	return bsoncore.AppendDateTimeElement(dst, key, t.UnixMilli())
}

// cmdHello answers hello / isMaster: a standalone, writable server. No
// topologyVersion is sent, so drivers poll instead of streaming.
func cmdHello(c *clientConn, req *request, dst []byte) ([]byte, error) {
	if req.name == "hello" {
		dst = bsoncore.AppendBooleanElement(dst, "isWritablePrimary", true)
	} else {
		dst = bsoncore.AppendBooleanElement(dst, "ismaster", true)
	}
	if v, err := req.lookupErr("helloOk"); err == nil && v.Type == bsoncore.TypeBoolean && v.Boolean() {
		dst = bsoncore.AppendBooleanElement(dst, "helloOk", true)
	}
	dst = bsoncore.AppendInt32Element(dst, "maxBsonObjectSize", mongoerr.MaxBSONObjectSize)
	dst = bsoncore.AppendInt32Element(dst, "maxMessageSizeBytes", 48000000)
	dst = bsoncore.AppendInt32Element(dst, "maxWriteBatchSize", 100000)
	dst = appendDate(dst, "localTime", time.Now())
	dst = bsoncore.AppendInt32Element(dst, "logicalSessionTimeoutMinutes", 30)
	dst = bsoncore.AppendInt32Element(dst, "connectionId", int32(c.id))
	dst = bsoncore.AppendInt32Element(dst, "minWireVersion", 0)
	dst = bsoncore.AppendInt32Element(dst, "maxWireVersion", maxWireVersion)
	dst = bsoncore.AppendBooleanElement(dst, "readOnly", false)
	return dst, nil
}

func versionArray(dst []byte, key string) []byte {
	a, d := bsoncore.AppendArrayElementStart(dst, key)
	for i, p := range strings.Split(MongoVersion, ".") {
		n := 0
		for _, ch := range p {
			n = n*10 + int(ch-'0')
		}
		d = bsoncore.AppendInt32Element(d, itoa(i), int32(n))
	}
	d = bsoncore.AppendInt32Element(d, "3", 0)
	d, _ = bsoncore.AppendArrayEnd(d, a)
	return d
}

func cmdBuildInfo(c *clientConn, req *request, dst []byte) ([]byte, error) {
	dst = bsoncore.AppendStringElement(dst, "version", MongoVersion)
	dst = bsoncore.AppendStringElement(dst, "gitVersion", "minimongod-"+Version)
	a, dst := bsoncore.AppendArrayElementStart(dst, "modules")
	dst, _ = bsoncore.AppendArrayEnd(dst, a)
	dst = bsoncore.AppendStringElement(dst, "allocator", "system")
	dst = bsoncore.AppendStringElement(dst, "javascriptEngine", "none")
	dst = bsoncore.AppendStringElement(dst, "sysInfo", "deprecated")
	dst = versionArray(dst, "versionArray")
	o, dst := bsoncore.AppendDocumentElementStart(dst, "openssl")
	dst = bsoncore.AppendStringElement(dst, "running", "disabled")
	dst, _ = bsoncore.AppendDocumentEnd(dst, o)
	e, dst := bsoncore.AppendDocumentElementStart(dst, "buildEnvironment")
	dst = bsoncore.AppendStringElement(dst, "distarch", runtime.GOARCH)
	dst = bsoncore.AppendStringElement(dst, "target_os", runtime.GOOS)
	dst = bsoncore.AppendStringElement(dst, "go", runtime.Version())
	dst, _ = bsoncore.AppendDocumentEnd(dst, e)
	dst = bsoncore.AppendInt32Element(dst, "bits", 64)
	dst = bsoncore.AppendBooleanElement(dst, "debug", false)
	dst = bsoncore.AppendInt32Element(dst, "maxBsonObjectSize", mongoerr.MaxBSONObjectSize)
	s, dst := bsoncore.AppendArrayElementStart(dst, "storageEngines")
	dst = bsoncore.AppendStringElement(dst, "0", "wiredTiger")
	dst, _ = bsoncore.AppendArrayEnd(dst, s)
	m, dst := bsoncore.AppendDocumentElementStart(dst, "minimongod")
	dst = bsoncore.AppendStringElement(dst, "version", Version)
	dst = bsoncore.AppendStringElement(dst, "imitates", "MongoDB "+MongoVersion)
	dst = bsoncore.AppendStringElement(dst, "storageEngine", "WiredTiger "+WiredTigerVersion)
	dst, _ = bsoncore.AppendDocumentEnd(dst, m)
	return dst, nil
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

func kernelRelease() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return ""
	}
	b := make([]byte, 0, len(u.Release))
	for _, ch := range u.Release {
		if ch == 0 {
			break
		}
		b = append(b, byte(ch))
	}
	return string(b)
}

func cmdHostInfo(c *clientConn, req *request, dst []byte) ([]byte, error) {
	s, d := bsoncore.AppendDocumentElementStart(dst, "system")
	d = appendDate(d, "currentTime", time.Now())
	d = bsoncore.AppendStringElement(d, "hostname", hostname())
	d = bsoncore.AppendInt32Element(d, "cpuAddrSize", 64)
	d = bsoncore.AppendInt64Element(d, "memSizeMB", int64(c.s.totalRAM>>20))
	d = bsoncore.AppendInt64Element(d, "memLimitMB", int64(c.s.totalRAM>>20))
	d = bsoncore.AppendInt32Element(d, "numCores", int32(runtime.NumCPU()))
	d = bsoncore.AppendStringElement(d, "cpuArch", "x86_64")
	d = bsoncore.AppendBooleanElement(d, "numaEnabled", false)
	d, _ = bsoncore.AppendDocumentEnd(d, s)
	o, d := bsoncore.AppendDocumentElementStart(d, "os")
	d = bsoncore.AppendStringElement(d, "type", "Linux")
	d = bsoncore.AppendStringElement(d, "name", osName())
	d = bsoncore.AppendStringElement(d, "version", kernelRelease())
	d, _ = bsoncore.AppendDocumentEnd(d, o)
	e, d := bsoncore.AppendDocumentElementStart(d, "extra")
	d = bsoncore.AppendStringElement(d, "kernelVersion", kernelRelease())
	d = bsoncore.AppendInt64Element(d, "pageSize", int64(os.Getpagesize()))
	d, _ = bsoncore.AppendDocumentEnd(d, e)
	return d, nil
}

func osName() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "Linux"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return "Linux"
}

func cmdGetCmdLineOpts(c *clientConn, req *request, dst []byte) ([]byte, error) {
	a, d := bsoncore.AppendArrayElementStart(dst, "argv")
	for i, arg := range c.s.argv {
		d = bsoncore.AppendStringElement(d, itoa(i), arg)
	}
	d, _ = bsoncore.AppendArrayEnd(d, a)
	parsed, err := bson.Marshal(c.s.opts.Parsed)
	if err != nil {
		return nil, err
	}
	return bsoncore.AppendDocumentElement(d, "parsed", parsed), nil
}

var smallInts [1000]string

func init() {
	for i := range smallInts {
		smallInts[i] = stringsItoa(i)
	}
}

func stringsItoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}

// itoa returns an array index key.
func itoa(i int) string {
	if i < len(smallInts) {
		return smallInts[i]
	}
	return stringsItoa(i)
}
