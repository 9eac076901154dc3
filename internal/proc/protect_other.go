//go:build !linux

package proc

// setNotDumpable does nothing outside Linux.
func setNotDumpable() error { return nil }

// hideInitialEnviron does nothing outside Linux: there is no /proc/PID/environ
// to read another process's environment from.
func hideInitialEnviron(func(string) bool) error { return nil }
