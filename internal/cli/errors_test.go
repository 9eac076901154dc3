package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deployer-dev/deployer/internal/lockmgr"
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
