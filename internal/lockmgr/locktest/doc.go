// Package locktest is the conformance suite every lockmgr.Backend runs
// (docs/backends.md): a backend's test file hands Run a constructor and gets the whole
// contract of lockmgr.Backend checked (acquire, held, release, fencing, expiry
// takeover, owner-checked release and heartbeat, List, races between
// independent clients, cancelled contexts), plus the Manager's behaviour on
// top of that backend (hierarchy, mutual exclusion under contention, lease
// loss, waiting). Bench measures acquire + release.
//
// Stores are shared between runs and tests: every test uses keys under its
// own random stack name, so the suite can run against a long-lived server.
package locktest
