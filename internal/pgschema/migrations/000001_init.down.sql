DROP TABLE IF EXISTS deployer_state_events;
DROP TABLE IF EXISTS deployer_state;
DROP TABLE IF EXISTS deployer_locks;
DROP SEQUENCE IF EXISTS deployer_lock_fence;
