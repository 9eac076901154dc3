package termui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
	"github.com/deployer-dev/deployer/internal/statestore"
)

// fixErr is an error that knows its cause and fix, as a missing table or
// schema does.
type fixErr struct{ cause error }

func (e *fixErr) Fix() string {
	return `dynamodb table "locks" in us-east-1 not found: run deployer backend init`
}
func (e *fixErr) Error() string { return e.Fix() + ": " + e.cause.Error() }
func (e *fixErr) Unwrap() error { return e.cause }

func TestRemedy(t *testing.T) {
	rec := lockmgr.Record{LockKey: "stack:shop:env:dev", LockID: "id-1", LockedBy: "alice@laptop", LockedAt: 1705329600,
		LastHeartbeat: 1705329600, ExpiresAt: 1705333200, Metadata: lockmgr.Metadata{Operation: "deploy", Hostname: "laptop", PID: 42}}
	sdk := errors.New("ResourceNotFoundException: Requested resource not found")
	badState := &statestore.ChecksumError{Location: "postgres://db (shop/dev)", Stack: "shop", Env: "dev", Field: "resources", Stored: "sha256:aa", Computed: "sha256:bb"}
	for _, tt := range []struct {
		name     string
		err      error
		want     []string
		wantNot  []string
		wantHead string
	}{
		{name: "held, no wait", err: fmt.Errorf("acquire: %w", &lockmgr.HeldError{Record: rec}),
			wantHead: "lock stack:shop:env:dev is held; another operation is in progress:",
			want:     []string{"Held by:        alice@laptop", "Wait for it with --lock-timeout DUR", "deployer unlock -s shop -e dev --force --lock-id id-1"}},
		{name: "held after a wait", err: &lockmgr.HeldError{Record: rec, Waited: 4*time.Second + 300*time.Millisecond},
			wantHead: "lock stack:shop:env:dev is still held after waiting 4s (--lock-timeout); another operation is in progress:",
			want:     []string{"Held by:        alice@laptop", "Wait longer with a larger --lock-timeout.", "--lock-id id-1"},
			wantNot:  []string{"Wait for it with --lock-timeout DUR"}},
		{name: "cause and fix lead", err: fmt.Errorf("read the lock backend's clock: %w", fmt.Errorf("read dynamodb clock: %w", &fixErr{cause: sdk})),
			wantHead: `dynamodb table "locks" in us-east-1 not found: run deployer backend init`,
			want:     []string{"\n  (read the lock backend's clock: read dynamodb clock: ResourceNotFoundException: Requested resource not found)"}},
		{name: "a fix alone", err: &fixErr{cause: sdk}, wantHead: `dynamodb table "locks" in us-east-1 not found: run deployer backend init`,
			want: []string{"\n  (ResourceNotFoundException: Requested resource not found)"}},
		{name: "other errors as they are", err: errors.New("boom"), wantHead: "boom"},
		{name: "a state that failed verification names its restore", err: fmt.Errorf("load: %w", badState),
			wantHead: "load: " + badState.Error(),
			want:     []string{"\nNothing was written. Find the last intact serial with `deployer history -s shop -e dev`, then roll the state back to it with `deployer restore -s shop -e dev --serial N`"}},
		{name: "a state file without a stack", err: &statestore.ChecksumError{Location: "deployer-errored-shop-dev.json", Field: "outputs"},
			want: []string{"`deployer history -e ENV`"}, wantHead: `state deployer-errored-shop-dev.json failed verification: checksum of outputs is  but the file records `},
		{name: "a message that already says what to do", err: Told(badState, "restore one"),
			wantHead: badState.Error(), want: []string{"\nrestore one"}, wantNot: []string{"Nothing was written"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := Remedy(tt.err)
			if head, _, _ := strings.Cut(got, "\n"); head != tt.wantHead {
				t.Errorf("first line %q, want %q\n%s", head, tt.wantHead, got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("should not say %q:\n%s", w, got)
				}
			}
		})
	}
}
