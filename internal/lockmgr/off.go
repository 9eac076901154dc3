package lockmgr

// Off is implemented by a Backend that takes no locks (backend.lock: none):
// every acquire succeeds and nothing is stored.
type Off interface{ LockingOff() bool }

// Enabled reports whether m's backend takes real locks.
func (m *Manager) Enabled() bool {
	o, ok := m.b.(Off)
	return !ok || !o.LockingOff()
}
