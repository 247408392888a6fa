// The C half of cfloord: accept on a loopback port and answer each
// connection's requests from its own thread.
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *rfind, *rhello, *rlegacy;
static int nfind, nhello, nlegacy;

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

static void *serve_conn(void *arg) {
	int fd = (int)(intptr_t)arg, one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	int cap = 1 << 16;
	char *buf = malloc(cap), *out = malloc(4096);
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
		int n = nlegacy;
		// OP_MSG: flags (4), section kind 0 (1), then the body: its
		// length (4), the first element's type (1) and name.
		if (op == opMsg) {
			reply = rhello;
			n = nhello;
			if (len > 26 && memcmp(buf + 26, "find", 5) == 0) {
				reply = rfind;
				n = nfind;
			}
		}
		if (n > 4096)
			break;
		memcpy(out, reply, n);
		memcpy(out + 8, &reqID, 4); // responseTo
		if (write_full(fd, out, n) != 0)
			break;
	}
	free(buf);
	free(out);
	close(fd);
	return NULL;
}

int cfloor_serve(int port, const char *find, int n1, const char *hello, int n2, const char *legacy, int n3) {
	rfind = find, nfind = n1, rhello = hello, nhello = n2, rlegacy = legacy, nlegacy = n3;
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
