/* C shims for calling WiredTiger's method tables from Go (cgo cannot call
 * through C function pointers). Keys and values are raw byte items
 * (key_format=u, value_format=u). */
#ifndef WTD_SHIM_H
#define WTD_SHIM_H
#include <stdint.h>
#include <stdlib.h>
#include <wiredtiger.h>

int wtd_open(const char *home, const char *config, WT_CONNECTION **connp, char *errbuf, size_t errlen);
int wtd_conn_close(WT_CONNECTION *c, const char *config);
int wtd_conn_reconfigure(WT_CONNECTION *c, const char *config, char *errbuf, size_t errlen);
int wtd_open_session(WT_CONNECTION *c, const char *config, WT_SESSION **sp);

int wtd_session_close(WT_SESSION *s);
int wtd_session_create(WT_SESSION *s, const char *uri, const char *config, char *errbuf, size_t errlen);
int wtd_session_drop(WT_SESSION *s, const char *uri, const char *config, char *errbuf, size_t errlen);
int wtd_session_begin(WT_SESSION *s, const char *config);
int wtd_session_commit(WT_SESSION *s, const char *config);
int wtd_session_rollback(WT_SESSION *s, const char *config);
int wtd_session_verify(WT_SESSION *s, const char *uri, char *errbuf, size_t errlen);
int wtd_session_checkpoint(WT_SESSION *s, const char *config);
int wtd_session_log_flush(WT_SESSION *s, const char *config);
int wtd_session_reset(WT_SESSION *s);
int wtd_open_cursor(WT_SESSION *s, const char *uri, const char *config, WT_CURSOR **cp, char *errbuf, size_t errlen);

int wtd_cursor_close(WT_CURSOR *c);
int wtd_cursor_reset(WT_CURSOR *c);
/* wtd_kv is a key and value read at a cursor, returned by value so that
 * Go passes no pointers to C for them (which would put them on the heap).
 * The bytes are WiredTiger's, valid until the cursor moves. */
typedef struct {
	const void *key;
	size_t klen;
	const void *value;
	size_t vlen;
	int ret;
} wtd_kv;

wtd_kv wtd_cursor_search(WT_CURSOR *c, const void *k, size_t klen);
int wtd_cursor_search_near(WT_CURSOR *c, const void *k, size_t klen, int *exact);
int wtd_cursor_insert(WT_CURSOR *c, const void *k, size_t klen, const void *v, size_t vlen);
int wtd_cursor_update(WT_CURSOR *c, const void *k, size_t klen, const void *v, size_t vlen);
int wtd_cursor_remove(WT_CURSOR *c, const void *k, size_t klen);
int wtd_cursor_next(WT_CURSOR *c);
int wtd_cursor_prev(WT_CURSOR *c);
int wtd_cursor_get_str_key(WT_CURSOR *c, const char **k);
wtd_kv wtd_cursor_get(WT_CURSOR *c, int with_value);

/* wtd_stats_dump walks a statistics cursor and packs every entry as
 * [int64 value][uint16 desclen][desc bytes] into buf. It returns the bytes
 * used, or -needed when buf is too small, or a WiredTiger error in *err. */
int64_t wtd_stats_dump(WT_SESSION *s, const char *uri, char *buf, int64_t buflen, int *err);

const char *wtd_strerror(int code);

/* wtd_config_key is the next top-level key of a configuration string, as an
 * offset and length into the string the parser was opened on; ret is
 * WT_NOTFOUND after the last key, or WiredTiger's error. */
typedef struct {
	int ret;
	size_t off;
	size_t len;
} wtd_config_key;

int wtd_config_parser_open(const char *config, size_t len, WT_CONFIG_PARSER **pp);
wtd_config_key wtd_config_next_key(WT_CONFIG_PARSER *p, const char *config);
void wtd_config_parser_close(WT_CONFIG_PARSER *p);
#endif
