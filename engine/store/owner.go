package store

import (
	"os"
	"strings"
)

// owner identifies a process that writes runs.
type owner struct {
	pid    int
	host   string
	bootID string // "" where the system does not say
}

// bootIDPath holds a random id that changes with every boot of Linux.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

func currentOwner() owner {
	host, _ := os.Hostname() // "" still tells runs of this host apart from others'
	boot, _ := os.ReadFile(bootIDPath)
	return owner{pid: os.Getpid(), host: host, bootID: strings.TrimSpace(string(boot))}
}

// ownerGone reports whether the process pid on host, which recorded bootID
// when it created a run, has certainly ended. Processes of other hosts
// cannot be checked and are never called gone.
func (o owner) ownerGone(pid int, host, bootID string) bool {
	if host != o.host {
		return false
	}
	if bootID != "" && o.bootID != "" && bootID != o.bootID {
		return true // the host rebooted since; the pid may belong to someone else now
	}
	if pid == o.pid {
		return false
	}
	return !processAlive(pid)
}

// ThisProcess returns this process's pid, host name and boot id, as runs
// record their owner.
func ThisProcess() (pid int, host, bootID string) {
	o := currentOwner()
	return o.pid, o.host, o.bootID
}

// OwnerGone reports whether the process pid on host, which recorded bootID,
// has certainly ended (see Run's owner columns): processes of other hosts
// are never called gone, and a boot id is compared only when both are known.
func OwnerGone(pid int, host, bootID string) bool {
	return currentOwner().ownerGone(pid, host, bootID)
}
