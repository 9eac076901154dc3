// Package postgres is the postgres:// state backend (docs/self-hosted.md#postgresql-locks-and-state).
// deployer_state holds the current document of each stack/environment with
// its serial, lineage and a row version that is the compare-and-swap token;
// deployer_state_events is the append-only history, one event per write
// (serial, deployment id, correlation id, causation id, time, document), which
// `history` and `restore` read. A write is one transaction. When the lock
// backend is the same database, the transaction also checks that the
// writer's lock row is still live with its lock_id (a coordinated
// update), so a holder whose lease was taken over cannot write. The schema is
// internal/pgschema's and is checked on first use.
package postgres
