-- deployer schema version 1 (docs/self-hosted.md#postgresql-locks-and-state).

-- Fences come from one sequence: nextval never goes back, across release,
-- expiry and rollback, so every acquisition of a key gets a larger fence.
CREATE SEQUENCE IF NOT EXISTS deployer_lock_fence AS bigint;

-- One row per key ever locked: the lock record of docs/locking.md while held
-- (or expired, not yet taken over); a tombstone with an empty lock_id once
-- released, kept so the next takeover draws its fence under the row lock.
-- Times are epoch seconds, as in the record's JSON.
CREATE TABLE IF NOT EXISTS deployer_locks (
    lock_key       text    PRIMARY KEY,
    lock_id        text    NOT NULL,
    locked_by      text    NOT NULL,
    locked_at      bigint  NOT NULL,
    expires_at     bigint  NOT NULL,
    last_heartbeat bigint  NOT NULL,
    metadata       jsonb   NOT NULL DEFAULT '{}'::jsonb,
    fence          bigint  NOT NULL
);

-- The current deployer-state-v1 document of each stack/environment. document
-- holds the exact bytes written (bytea), so checksums verify on load; version
-- is the compare-and-swap token, bumped by every write.
CREATE TABLE IF NOT EXISTS deployer_state (
    stack      text        NOT NULL,
    env        text        NOT NULL,
    serial     bigint      NOT NULL,
    lineage    text        NOT NULL,
    version    bigint      NOT NULL,
    document   bytea       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (stack, env)
);

-- Append-only history: one event per state write (state events).
-- correlation_id is the deployment id; causation_id the deployment id of the
-- previous serial (NULL for the first write).
CREATE TABLE IF NOT EXISTS deployer_state_events (
    stack          text        NOT NULL,
    env            text        NOT NULL,
    serial         bigint      NOT NULL,
    lineage        text        NOT NULL,
    deployment_id  text        NOT NULL,
    correlation_id text        NOT NULL,
    causation_id   text,
    created_at     timestamptz NOT NULL,
    document       bytea       NOT NULL,
    PRIMARY KEY (stack, env, serial)
);
