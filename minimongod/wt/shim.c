#include <string.h>
#include "shim.h"

/* The event handler hands WiredTiger's messages to Go and keeps the last
 * error message of the calling thread, so a failing call can report it. */
extern void wtdGoMessage(int isError, int code, char *msg);

static __thread char last_error[1024];

static int on_error(WT_EVENT_HANDLER *h, WT_SESSION *s, int code, const char *msg) {
	(void)h; (void)s;
	strncpy(last_error, msg, sizeof(last_error) - 1);
	last_error[sizeof(last_error) - 1] = 0;
	wtdGoMessage(1, code, (char *)msg);
	return 0;
}

static int on_message(WT_EVENT_HANDLER *h, WT_SESSION *s, const char *msg) {
	(void)h; (void)s;
	wtdGoMessage(0, 0, (char *)msg);
	return 0;
}

static WT_EVENT_HANDLER handler = { on_error, on_message, NULL, NULL };

static void take_error(char *errbuf, size_t errlen) {
	if (errbuf == NULL || errlen == 0) return;
	strncpy(errbuf, last_error, errlen - 1);
	errbuf[errlen - 1] = 0;
}

int wtd_open(const char *home, const char *config, WT_CONNECTION **connp, char *errbuf, size_t errlen) {
	last_error[0] = 0;
	int r = wiredtiger_open(home, &handler, config, connp);
	if (r != 0) take_error(errbuf, errlen);
	return r;
}
int wtd_conn_close(WT_CONNECTION *c, const char *config) { return c->close(c, config); }
int wtd_conn_reconfigure(WT_CONNECTION *c, const char *config, char *errbuf, size_t errlen) {
	last_error[0] = 0;
	int r = c->reconfigure(c, config);
	if (r != 0) take_error(errbuf, errlen);
	return r;
}
int wtd_open_session(WT_CONNECTION *c, const char *config, WT_SESSION **sp) {
	return c->open_session(c, NULL, config, sp);
}

int wtd_session_close(WT_SESSION *s) { return s->close(s, NULL); }
int wtd_session_create(WT_SESSION *s, const char *uri, const char *config, char *errbuf, size_t errlen) {
	last_error[0] = 0;
	int r = s->create(s, uri, config);
	if (r != 0) take_error(errbuf, errlen);
	return r;
}
int wtd_session_drop(WT_SESSION *s, const char *uri, const char *config, char *errbuf, size_t errlen) {
	last_error[0] = 0;
	int r = s->drop(s, uri, config);
	if (r != 0) take_error(errbuf, errlen);
	return r;
}
int wtd_session_begin(WT_SESSION *s, const char *config) { return s->begin_transaction(s, config); }
int wtd_session_commit(WT_SESSION *s, const char *config) { return s->commit_transaction(s, config); }
int wtd_session_rollback(WT_SESSION *s, const char *config) { return s->rollback_transaction(s, config); }
int wtd_session_verify(WT_SESSION *s, const char *uri, char *errbuf, size_t errlen) {
	last_error[0] = 0;
	int r = s->verify(s, uri, NULL);
	if (r != 0) take_error(errbuf, errlen);
	return r;
}
int wtd_session_checkpoint(WT_SESSION *s, const char *config) { return s->checkpoint(s, config); }
int wtd_session_log_flush(WT_SESSION *s, const char *config) { return s->log_flush(s, config); }
int wtd_session_reset(WT_SESSION *s) { return s->reset(s); }
int wtd_open_cursor(WT_SESSION *s, const char *uri, const char *config, WT_CURSOR **cp, char *errbuf, size_t errlen) {
	last_error[0] = 0;
	int r = s->open_cursor(s, uri, NULL, config, cp);
	if (r != 0) take_error(errbuf, errlen);
	return r;
}

int wtd_cursor_close(WT_CURSOR *c) { return c->close(c); }
int wtd_cursor_reset(WT_CURSOR *c) { return c->reset(c); }

static void set_key(WT_CURSOR *c, const void *k, size_t klen) {
	WT_ITEM key;
	memset(&key, 0, sizeof(key));
	key.data = k;
	key.size = klen;
	c->set_key(c, &key);
}

/* get_value reads the value at the cursor's position into out. */
static void get_value(WT_CURSOR *c, wtd_kv *out) {
	WT_ITEM val;
	out->ret = c->get_value(c, &val);
	if (out->ret != 0) return;
	out->value = val.data;
	out->vlen = val.size;
}

wtd_kv wtd_cursor_search(WT_CURSOR *c, const void *k, size_t klen) {
	wtd_kv out = {0};
	set_key(c, k, klen);
	out.ret = c->search(c);
	if (out.ret == 0) get_value(c, &out);
	return out;
}

int wtd_cursor_search_near(WT_CURSOR *c, const void *k, size_t klen, int *exact) {
	set_key(c, k, klen);
	return c->search_near(c, exact);
}

int wtd_cursor_insert(WT_CURSOR *c, const void *k, size_t klen, const void *v, size_t vlen) {
	WT_ITEM val;
	memset(&val, 0, sizeof(val));
	val.data = v;
	val.size = vlen;
	set_key(c, k, klen);
	c->set_value(c, &val);
	return c->insert(c);
}

int wtd_cursor_update(WT_CURSOR *c, const void *k, size_t klen, const void *v, size_t vlen) {
	WT_ITEM val;
	memset(&val, 0, sizeof(val));
	val.data = v;
	val.size = vlen;
	set_key(c, k, klen);
	c->set_value(c, &val);
	return c->update(c);
}

int wtd_cursor_remove(WT_CURSOR *c, const void *k, size_t klen) {
	set_key(c, k, klen);
	return c->remove(c);
}

int wtd_cursor_next(WT_CURSOR *c) { return c->next(c); }
int wtd_cursor_prev(WT_CURSOR *c) { return c->prev(c); }

int wtd_cursor_get_str_key(WT_CURSOR *c, const char **k) { return c->get_key(c, k); }

wtd_kv wtd_cursor_get(WT_CURSOR *c, int with_value) {
	wtd_kv out = {0};
	WT_ITEM key;
	out.ret = c->get_key(c, &key);
	if (out.ret != 0) return out;
	out.key = key.data;
	out.klen = key.size;
	if (with_value) get_value(c, &out);
	return out;
}

int64_t wtd_stats_dump(WT_SESSION *s, const char *uri, char *buf, int64_t buflen, int *err) {
	WT_CURSOR *c;
	int64_t used = 0;
	int over = 0;
	*err = s->open_cursor(s, uri, NULL, NULL, &c);
	if (*err != 0) return 0;
	int r;
	while ((r = c->next(c)) == 0) {
		const char *desc, *pvalue;
		int64_t value;
		if ((r = c->get_value(c, &desc, &pvalue, &value)) != 0) break;
		size_t dl = strlen(desc);
		if (dl > 65535) dl = 65535;
		int64_t need = 8 + 2 + (int64_t)dl;
		if (used + need <= buflen) {
			memcpy(buf + used, &value, 8);
			uint16_t l16 = (uint16_t)dl;
			memcpy(buf + used + 8, &l16, 2);
			memcpy(buf + used + 10, desc, dl);
		} else {
			over = 1;
		}
		used += need;
	}
	c->close(c);
	if (r != WT_NOTFOUND) { *err = r; return 0; }
	return over ? -used : used;
}

const char *wtd_strerror(int code) { return wiredtiger_strerror(code); }

int wtd_config_parser_open(const char *config, size_t len, WT_CONFIG_PARSER **pp) {
	return wiredtiger_config_parser_open(NULL, config, len, pp);
}
wtd_config_key wtd_config_next_key(WT_CONFIG_PARSER *p, const char *config) {
	WT_CONFIG_ITEM k, v;
	wtd_config_key out = {0, 0, 0};
	out.ret = p->next(p, &k, &v);
	if (out.ret == 0) {
		out.off = (size_t)(k.str - config);
		out.len = k.len;
	}
	return out;
}
void wtd_config_parser_close(WT_CONFIG_PARSER *p) { p->close(p); }
