package luabind

import (
	lua "github.com/yuin/gopher-lua"
)

func (b *binding) openHost(L *lua.LState) {
	L.SetGlobal("host", moduleTable(L, "host", map[string]lua.LGFunction{
		"drop_caches": b.hostDropCaches,
		"meminfo":     b.hostMeminfo,
		"facts":       b.hostFacts,
	}))
}

// host.drop_caches() -> { dropped = bool, cached_before = bytes, cached_after = bytes, reason = string }
//
// Drops the OS page cache of the whole host (needs root) and records the
// attempt with the run; dropped is false, with the reason, when it did not
// happen. It never fails the playbook.
func (b *binding) hostDropCaches(L *lua.LState) int {
	res := b.run.DropCaches(b.ctx)
	v, err := structToLua(L, res)
	if err != nil {
		b.raise(L, "host.drop_caches", err)
	}
	L.Push(v)
	return 1
}

// host.meminfo() -> { mem_total = bytes, mem_free, mem_available, buffers, cached, swap_cached,
// active, inactive, active_file, inactive_file, dirty, writeback, swap_total, swap_free, shmem,
// mapped, anon_pages }
func (b *binding) hostMeminfo(L *lua.LState) int {
	mi, err := b.host.Meminfo()
	if err != nil {
		b.raise(L, "host.meminfo", err)
	}
	v, err := structToLua(L, mi)
	if err != nil {
		b.raise(L, "host.meminfo", err)
	}
	L.Push(v)
	return 1
}

// host.facts() -> { hostname, os, platform, platform_version, kernel_release, arch, cpu_model,
// logical_cores, physical_cores, mem_total_bytes, virtualization = {...}, disk = {...} }
//
// The disk is the one that holds the run's directory. Facts that cannot
// be read are left empty (zero).
func (b *binding) hostFacts(L *lua.LState) int {
	f, _ := b.host.Facts(b.ctx, b.run.Dir())
	v, err := structToLua(L, f)
	if err != nil {
		b.raise(L, "host.facts", err)
	}
	L.Push(v)
	return 1
}
