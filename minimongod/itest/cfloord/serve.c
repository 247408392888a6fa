// The C half of cfloord: accept on a loopback port and answer each
// connection's requests from its own thread; with a WiredTiger table, each
// find reads its document from the table by _id.
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wiredtiger.h>

static const char *rfind, *rhello, *rlegacy;
static int nfind, nhello, nlegacy;
static WT_CONNECTION *conn; // NULL: every find gets the stored document
static int doc_off, doc_len; // where the document sits in rfind

enum { maxMessage = 48000000, opMsg = 2013 };

static int read_full(int fd, char *b, int n) {
	int got = 0;
	while (got < n) {
		ssize_t r = read(fd, b + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += r;
	}
	return 0;
}

static int write_full(int fd, const char *b, int n) {
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= w;
	}
	return 0;
}

static int32_t le32(const char *p) {
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

// value_len returns the size of a BSON value of type t at p (end: the
// document's end), or -1 for a type this server does not expect.
static int value_len(int t, const char *p, const char *end) {
	switch (t) {
	case 0x01: case 0x09: case 0x11: case 0x12: return 8;
	case 0x02: return end - p >= 4 ? 4 + le32(p) : -1;
	case 0x03: case 0x04: return end - p >= 4 ? le32(p) : -1;
	case 0x05: return end - p >= 4 ? 5 + le32(p) : -1;
	case 0x07: return 12;
	case 0x08: return 1;
	case 0x0A: return 0;
	case 0x10: return 4;
	case 0x13: return 16;
	}
	return -1;
}

// lookup finds the element name in the document at doc and returns its
// type and value, or 0.
static int lookup(const char *doc, const char *end, const char *name, const char **val) {
	if (end - doc < 5)
		return 0;
	const char *p = doc + 4, *dend = doc + le32(doc) - 1;
	if (dend > end)
		return 0;
	while (p < dend) {
		int t = (unsigned char)*p++;
		const char *key = p;
		p += strnlen(p, dend - p) + 1;
		int n = value_len(t, p, dend);
		if (n < 0 || p + n > dend)
			return 0;
		if (strcmp(key, name) == 0) {
			*val = p;
			return t;
		}
		p += n;
	}
	return 0;
}

// find_id returns the _id of the find command's filter as an integer.
static int find_id(const char *body, const char *end, int32_t *id) {
	const char *filter, *v;
	if (lookup(body, end, "filter", &filter) != 0x03)
		return -1;
	switch (lookup(filter, end, "_id", &v)) {
	case 0x10: *id = le32(v); return 0;
	case 0x12: { int64_t x; memcpy(&x, v, 8); *id = (int32_t)x; return 0; }
	}
	return -1;
}

static void *serve_conn(void *arg) {
	int fd = (int)(intptr_t)arg, one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	int cap = 1 << 16;
	char *buf = malloc(cap), *out = malloc(4096);
	WT_SESSION *sess = NULL;
	WT_CURSOR *cur = NULL;
	if (conn != NULL && (conn->open_session(conn, NULL, NULL, &sess) != 0 ||
	                     sess->open_cursor(sess, "table:c", NULL, NULL, &cur) != 0))
		goto done;
	for (;;) {
		int32_t len, reqID, op;
		if (read_full(fd, buf, 4) != 0)
			break;
		memcpy(&len, buf, 4);
		if (len < 21 || len > maxMessage)
			break;
		if (len > cap) {
			cap = len;
			buf = realloc(buf, cap);
		}
		if (read_full(fd, buf + 4, len - 4) != 0)
			break;
		memcpy(&reqID, buf + 4, 4);
		memcpy(&op, buf + 12, 4);
		const char *reply = rlegacy;
		int n = nlegacy, find = 0;
		// OP_MSG: flags (4), section kind 0 (1), then the body: its
		// length (4), the first element's type (1) and name.
		if (op == opMsg) {
			reply = rhello;
			n = nhello;
			if (len > 26 && memcmp(buf + 26, "find", 5) == 0) {
				reply = rfind;
				n = nfind;
				find = 1;
			}
		}
		if (n > 4096)
			break;
		memcpy(out, reply, n);
		memcpy(out + 8, &reqID, 4); // responseTo
		if (find && cur != NULL) {
			int32_t id;
			WT_ITEM v;
			if (find_id(buf + 21, buf + len, &id) != 0)
				break;
			cur->set_key(cur, id);
			if (cur->search(cur) != 0 || cur->get_value(cur, &v) != 0 || (int)v.size != doc_len)
				break;
			memcpy(out + doc_off, v.data, v.size);
			cur->reset(cur);
		}
		if (write_full(fd, out, n) != 0)
			break;
	}
done:
	if (sess != NULL)
		sess->close(sess, NULL);
	free(buf);
	free(out);
	close(fd);
	return NULL;
}

// cfloor_open opens WiredTiger in home with a table:c of int32 keys and
// returns a session to load it with, or NULL (the error in *err).
WT_SESSION *cfloor_open(const char *home, const char *config, int *err) {
	WT_SESSION *s;
	if ((*err = wiredtiger_open(home, NULL, config, &conn)) != 0)
		return NULL;
	if ((*err = conn->open_session(conn, NULL, NULL, &s)) != 0)
		return NULL;
	if ((*err = s->create(s, "table:c", "key_format=i,value_format=u")) != 0)
		return NULL;
	return s;
}

// cfloor_load writes n documents of len bytes each, the i-th with key i.
int cfloor_load(WT_SESSION *s, const char *docs, int n, int len) {
	WT_CURSOR *c;
	int r;
	if ((r = s->open_cursor(s, "table:c", NULL, NULL, &c)) != 0)
		return r;
	for (int i = 0; i < n; i++) {
		WT_ITEM v = {.data = docs + (size_t)i * len, .size = len};
		c->set_key(c, (int32_t)i);
		c->set_value(c, &v);
		if ((r = c->insert(c)) != 0)
			return r;
	}
	return c->close(c);
}

int cfloor_serve(int port, const char *find, int n1, const char *hello, int n2, const char *legacy, int n3, int off, int dlen) {
	rfind = find, nfind = n1, rhello = hello, nhello = n2, rlegacy = legacy, nlegacy = n3;
	doc_off = off, doc_len = dlen;
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(port);
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 64) != 0)
		return errno;
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return errno;
		}
		pthread_t t;
		if (pthread_create(&t, NULL, serve_conn, (void *)(intptr_t)c) != 0) {
			close(c);
			continue;
		}
		pthread_detach(t);
	}
}
