package hostctl

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

func TestSplitWTConfig(t *testing.T) {
	for _, tt := range []struct {
		cfg  string
		want [][2]string // nil: a syntax error
	}{
		{"", [][2]string{}},
		{"eviction_target=75, eviction=(threads_min=8,threads_max=12),checkpoint=(wait=60)",
			[][2]string{{"eviction_target", "75"}, {"eviction", "(threads_min=8,threads_max=12)"}, {"checkpoint", "(wait=60)"}}},
		{`"extensions"=["/x.so"]`, [][2]string{{"extensions", `["/x.so"]`}}},
		{`log = ( enabled=true , "path" = "/d" )`, [][2]string{{"log", `( enabled=true , "path" = "/d" )`}}},
		{"a:1,b:(c:d)", [][2]string{{"a", "1"}, {"b", "(c:d)"}}},
		{"(a=1,b=2)", [][2]string{{"a", "1"}, {"b", "2"}}}, // outer brackets are transparent
		{"a,b=", [][2]string{{"a", ""}, {"b", ""}}},        // keys without a value are true
		{"log.path=/x", [][2]string{{"log.path", "/x"}}},
		{`a="unterminated`, [][2]string{{"a", `""`}}}, // WiredTiger's reading: an empty string
		{"a=b(c", [][2]string{{"a", "b(c"}}},          // '(' inside a bare token is part of it
		{"a=b=c", nil},                                // the value is already complete
		{"a=b:c", nil},                                // a new value starts without a separator
		{"a b", nil},                                  // whitespace does not separate pairs
		{"a=(b", nil},                                 // unbalanced
		{"a=1)", nil},                                 // unbalanced
		{")", nil},
		{"a=\x01", nil}, // unexpected character
		{"a=\"\xff\"", nil},
	} {
		got, err := SplitWTConfig(tt.cfg)
		switch {
		case tt.want == nil && err == nil:
			t.Errorf("SplitWTConfig(%q) = %q, want a syntax error", tt.cfg, got)
		case tt.want != nil && err != nil:
			t.Errorf("SplitWTConfig(%q): %v", tt.cfg, err)
		case tt.want != nil && !slices.Equal(got, tt.want):
			t.Errorf("SplitWTConfig(%q) = %q, want %q", tt.cfg, got, tt.want)
		}
	}
}

func TestCheckWTConfigAllows(t *testing.T) {
	for _, cfg := range []string{
		"",
		"eviction_target=60,eviction_trigger=80",
		"cache_size=300M,eviction=(threads_min=4,threads_max=8)",
		"(eviction_dirty_target=5)",
		"log=(enabled=true,compressor=snappy,archive=false,file_max=100MB)",
		"checkpoint=(wait=60,log_size=2GB),statistics=(fast),verbose=[evict,checkpoint]",
		"file_manager=(close_idle_time=30),direct_io=[data],file_extend=(data=16MB)",
		"statistics_log=(wait=10,json=true,sources=[\"file:collection-2.wt\"]),operation_tracking=(enabled=false)",
		"block_compressor=zstd,prefix_compression=true,leaf_page_max=64KB",
		`type=lsm,lsm=(chunk_size=20MB,bloom_config="leaf_page_max=8MB")`,
		`type="file",huffman_value=english,app_metadata=(formatVersion=1)`,
		`builtin_extension_config={zstd={compression_level=6}}`,
		"eviction_target : 60 , eviction_trigger : 80",
	} {
		if err := CheckWTConfig(cfg); err != nil {
			t.Errorf("CheckWTConfig(%q) = %v, want nil", cfg, err)
		}
	}
}

func TestCheckWTConfigRefuses(t *testing.T) {
	for _, tt := range []struct{ cfg, key string }{
		{"log=(enabled=true,path=/tmp/x)", "log.path"},
		{`log=(enabled=true,"path"="/some/dir")`, "log.path"},
		{`"extensions"=["/run/x.so"]`, "extensions"},
		{"extensions=[/tmp/evil.so]", "extensions"},
		{"x=1, extensions : [/tmp/evil.so]", "extensions"},
		{"EXTENSIONS=[/tmp/evil.so]", "EXTENSIONS"},
		{"log.path=/tmp/x", "log.path"},
		{`"log.path"=/tmp/x`, "log.path"},
		{`log="path=/tmp/x"`, "log.path"},
		{`log="\"path\"=/tmp/x"`, "log.path"},
		{`log=("pa\u0074h"=/tmp/x)`, "log.path"},
		{"log=[path=/tmp/x]", "log.path"},
		{"log={path=/tmp/x}", "log.path"},
		{"log : ( path : /tmp/x )", "log.path"},
		{"(log=(path=/tmp/x))", "log.path"},
		{"LOG=(PATH=/tmp/x)", "LOG.PATH"},
		{"log=path", "log.path"},
		{"statistics_log=(wait=1,path=/tmp/x)", "statistics_log.path"},
		{"operation_tracking=(enabled=true,path=/tmp/x)", "operation_tracking.path"},
		{"tiered_storage=(bucket=x,bucket_prefix=y)", "tiered_storage"},
		{"chunk_cache=(enabled=true,storage_path=/tmp/c)", "chunk_cache.storage_path"},
		{"block_cache=(enabled=true,type=nvram,nvram_path=/dev/x)", "block_cache.type"},
		{"live_restore=(enabled=true,path=/tmp/x)", "live_restore"},
		{`source="file:/tmp/x.wt"`, "source"},
		{`type="file:/tmp/x"`, "type"},
		{"type", "type"},
		{"huffman_key=utf8/etc/passwd", "huffman_key"},
		{"encryption=(name=rot13,keyid=k,secretkey=s)", "encryption"},
		{"use_environment_priv=true", "use_environment_priv"},
		{"use_environment", "use_environment"},
		{`lsm=(merge_custom=(prefix="file:/tmp/x",start_generation=1))`, "lsm.merge_custom"},
		{`lsm=(bloom_config="source=x")`, "lsm.bloom_config.source"},
		{`lsm=(bloom_config="source=\"file:/tmp/x\"")`, "lsm.bloom_config.source"},
		{`builtin_extension_config={zlib={path=/tmp/x}}`, "builtin_extension_config.zlib.path"},
		{"import=(enabled=true,metadata_file=/tmp/x)", "import"},
		{`"/tmp/dir.path"=1`, "path"}, // a key part that is a path is not quoted
	} {
		err := CheckWTConfig(tt.cfg)
		if err == nil {
			t.Errorf("CheckWTConfig(%q) = nil, want the key %q refused", tt.cfg, tt.key)
			continue
		}
		if want := fmt.Sprintf("the WiredTiger key %q is refused: ", tt.key); !strings.Contains(err.Error(), want) {
			t.Errorf("CheckWTConfig(%q) = %q, want it to contain %q", tt.cfg, err, want)
		}
		if strings.Contains(err.Error(), "/tmp") || strings.Contains(err.Error(), "/etc") || strings.Contains(err.Error(), "/dev") {
			t.Errorf("CheckWTConfig(%q) = %q: it quotes the path", tt.cfg, err)
		}
	}
}

func TestCheckWTConfigRefusesWhatDoesNotParse(t *testing.T) {
	for _, cfg := range []string{
		"log=(enabled=true,path=/tmp/x",
		"eviction_target=60)",
		"a=b=c",
		"eviction=(threads_max=8=9)",
		"log=(enabled path=/tmp/x)",
		"a=\x00",
		"a=1,(b=2)=3",
		strings.Repeat("a=(", 40) + strings.Repeat(")", 40),
	} {
		err := CheckWTConfig(cfg)
		if err == nil {
			t.Errorf("CheckWTConfig(%q) = nil, want a refusal", cfg)
		} else if strings.Contains(err.Error(), "/tmp") {
			t.Errorf("CheckWTConfig(%q) = %q: it quotes the path", cfg, err)
		}
	}
}

// documentedWTKeys reads the configuration keys of the sections (such as
// "wiredtiger_open") from wiredtiger.h's @config comments, as dotted
// paths.
func documentedWTKeys(t *testing.T, header string, sections ...string) map[string][]string {
	t.Helper()
	f, err := os.Open(header)
	if err != nil {
		t.Fatalf("read WiredTiger's header (libwiredtiger-dev, which minimongod builds with): %v", err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	keys := map[string][]string{}
	for _, section := range sections {
		inside := false
		var stack []string
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			if strings.Contains(l, "@configstart{"+section+",") {
				inside = true
				continue
			}
			if !inside {
				continue
			}
			if strings.Contains(l, "@configend") {
				break
			}
			_, rest, ok := strings.Cut(l, "@config{")
			if !ok {
				continue
			}
			level := strings.Count(rest, "&nbsp;") / 4
			rest = strings.ReplaceAll(rest, "&nbsp;", "")
			if strings.TrimSpace(rest) == "" && i+1 < len(lines) {
				i++
				rest = strings.TrimLeft(lines[i], " \t*")
			}
			name, _, _ := strings.Cut(rest, ",")
			name = strings.TrimSpace(name)
			if name == "" || strings.HasPrefix(name, ")") {
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
				continue
			}
			stack = stack[:min(level, len(stack))]
			category := strings.HasSuffix(name, "= (")
			name = strings.TrimSpace(strings.TrimSuffix(name, "= ("))
			keys[strings.Join(append(slices.Clone(stack), name), ".")] = append(keys[strings.Join(append(slices.Clone(stack), name), ".")], section)
			if category {
				stack = append(stack, name)
			}
		}
		if !inside {
			t.Fatalf("%s: no @configstart{%s, ...}", header, section)
		}
	}
	return keys
}

// TestWTKeyDecisionsCoverWiredTiger holds the key tables to WiredTiger
// 3.2.1's documented keys: every key is refused (a refused part) or
// allowed with a reason, and no allowed key is also refused.
func TestWTKeyDecisionsCoverWiredTiger(t *testing.T) {
	keys := documentedWTKeys(t, "/usr/include/wiredtiger.h", "wiredtiger_open", "WT_CONNECTION.reconfigure", "WT_SESSION.create")
	if len(keys) < 140 {
		t.Fatalf("read %d keys from wiredtiger.h, want the ~150 of 3.2.1's wiredtiger_open, reconfigure and create", len(keys))
	}
	refusedPart := func(key string) string {
		for _, part := range strings.Split(key, ".") {
			if _, ok := wtRefused[part]; ok {
				return part
			}
		}
		return ""
	}
	var refusedKeys []string
	for key, sections := range keys {
		_, allowed := wtAllowed[key]
		part := refusedPart(key)
		switch {
		case allowed && part != "":
			t.Errorf("%s (%s) is both allowed and refused (%s)", key, sections, part)
		case !allowed && part == "":
			t.Errorf("%s (%s) is neither allowed nor refused: decide it in wtkeys.go", key, sections)
		case part != "":
			refusedKeys = append(refusedKeys, key)
		}
	}
	for key := range wtAllowed {
		if _, ok := keys[key]; !ok {
			t.Errorf("wtAllowed has %s, which WiredTiger 3.2.1 does not document", key)
		}
	}
	sort.Strings(refusedKeys)
	for _, must := range []string{"extensions", "log.path", "operation_tracking.path", "statistics_log.path", "encryption.secretkey",
		"use_environment", "use_environment_priv", "huffman_key", "lsm.merge_custom.prefix", "type"} {
		if !slices.Contains(refusedKeys, must) {
			t.Errorf("%s is not refused (refused: %s)", must, refusedKeys)
		}
	}
}
