// Package pgschema owns the PostgreSQL schema shared by the postgres lock
// backend (internal/lockmgr/postgres) and the postgres state backend
// (internal/statestore/postgres): the embedded SQL migrations, Migrate (run by
// `deployer backend init` through Init) and Check (run by both backends on first use, so a
// missing or older schema is a clear error naming the fix). See docs/self-hosted.md#schema-deployer-backend-init.
package pgschema
