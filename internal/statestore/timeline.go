package statestore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// The snapshot timeline of one stack/environment (docs/state-format.md#history-snapshots):
// backends list the snapshots they hold as stored; the Store orders them,
// applies a limit, marks the ones that never became state.json, and picks
// the snapshot a serial stands for. No backend repeats any of it.

// History lists the history snapshots of stack/env newest first (highest
// serial first; of one serial, the latest written first), at most limit of
// them (limit <= 0: all). Each is marked Uncommitted or not against head,
// the Head of the stored state.json as Load or CurrentHead returned it (the
// zero Head when there is none): a snapshot is uncommitted when its serial
// is above head's, or when a later snapshot of the same serial exists
// (docs/state-format.md#history-snapshots). No snapshot gives an empty list.
func (s *Store) History(ctx context.Context, stack, env string, head Head, limit int) ([]SnapshotInfo, error) {
	snaps, err := s.b.ListSnapshots(ctx, stack, env)
	if err != nil {
		return nil, err
	}
	return timeline(snaps, head.Serial, limit), nil
}

// timeline orders snaps newest first, marks them against the serial of
// state.json (head; 0 when there is none) and keeps the first limit (<= 0:
// all). Marking before the limit would change nothing: the later snapshot of
// a serial always comes before an earlier one.
func timeline(snaps []SnapshotInfo, head int64, limit int) []SnapshotInfo {
	out := slices.Clone(snaps)
	if out == nil {
		out = []SnapshotInfo{}
	}
	slices.SortFunc(out, newestFirst)
	for i := range out {
		out[i].Uncommitted = out[i].Serial > head || (i > 0 && out[i-1].Serial == out[i].Serial)
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

func newestFirst(a, b SnapshotInfo) int {
	return cmp.Or(cmp.Compare(b.Serial, a.Serial), b.Time.Compare(a.Time), cmp.Compare(b.Name, a.Name))
}

// Snapshot reads and verifies the history snapshot of stack/env that serial
// stands for: of several snapshots of one serial (a write that crashed
// before state.json, then a later write of that serial), the latest written,
// which is the one that became state.json. Errors as ReadSnapshot, and
// ErrNotFound (wrapped) when no snapshot of serial exists.
func (s *Store) Snapshot(ctx context.Context, stack, env string, serial int64) (*State, error) {
	snaps, err := s.b.ListSnapshots(ctx, stack, env)
	if err != nil {
		return nil, err
	}
	sn, ok := SnapshotOf(timeline(snaps, 0, 0), serial)
	if !ok {
		return nil, fmt.Errorf("no history snapshot of serial %d of %s: %w", serial, s.b.Location(stack, env), ErrNotFound)
	}
	return s.ReadSnapshot(ctx, stack, env, sn)
}

// SnapshotOf returns the snapshot serial stands for in snaps, a list in the
// order History returns: the first, latest written, of that serial (the one
// that became state.json when a write of serial was retried after a crash);
// false when snaps holds none of serial.
func SnapshotOf(snaps []SnapshotInfo, serial int64) (SnapshotInfo, bool) {
	for _, sn := range snaps {
		if sn.Serial == serial {
			return sn, true
		}
	}
	return SnapshotInfo{}, false
}

// ReadSnapshot reads and verifies the history snapshot sn of stack/env, as
// History listed it, like Load: ErrNotFound (wrapped) when it is gone,
// *ChecksumError when it fails verification or records another serial or
// stack/environment, *TooLargeError over the Store's limit.
func (s *Store) ReadSnapshot(ctx context.Context, stack, env string, sn SnapshotInfo) (*State, error) {
	data, err := s.b.ReadSnapshot(WithReadLimit(ctx, s.max), stack, env, sn)
	if err != nil {
		return nil, err
	}
	loc := fmt.Sprintf("%s (history snapshot %s)", s.b.Location(stack, env), sn.Name)
	if err := s.checkSize(loc, int64(len(data))); err != nil {
		return nil, err
	}
	st, err := Decode(data, loc)
	if err != nil {
		return nil, ofState(err, stack, env)
	}
	if st.Serial != sn.Serial || st.Metadata.Stack != stack || st.Metadata.Environment != env {
		return nil, ofState(corrupt(loc, data, fmt.Sprintf("the snapshot holds serial %d of %s/%s", st.Serial, st.Metadata.Stack, st.Metadata.Environment)), stack, env)
	}
	if err := s.open(ctx, st); err != nil {
		return nil, fmt.Errorf("open the secrets of %s: %w", loc, err)
	}
	return st, nil
}

// CurrentHead returns the Head of the stored state.json of stack/env, also
// when it fails verification (restore replaces such a state; history lists
// the snapshots beside it): as Load returns it when it verifies; else the
// serial and lineage the document records, read without verifying it, and
// when even its serial cannot be read (a truncated file), the highest serial
// of its history, with no lineage (docs/state-format.md#history-snapshots).
// The zero Head when there is no state.json. Other errors of Load (the
// backend, the size limit, the secrets key) are returned.
func (s *Store) CurrentHead(ctx context.Context, stack, env string) (Head, error) {
	_, head, err := s.Load(ctx, stack, env)
	if err == nil {
		return head, nil
	}
	if errors.Is(err, ErrNotFound) {
		return Head{}, nil
	}
	var bad *ChecksumError
	if !errors.As(err, &bad) {
		return Head{}, err
	}
	data, ver, err := s.b.Read(WithReadLimit(ctx, s.max), stack, env)
	if err != nil {
		return Head{}, err
	}
	serial, lineage, ok := peekHead(data)
	if !ok {
		snaps, err := s.b.ListSnapshots(ctx, stack, env)
		if err != nil {
			return Head{}, err
		}
		for _, sn := range snaps {
			serial = max(serial, sn.Serial)
		}
		lineage = ""
	}
	return Head{Version: ver, Serial: serial, Lineage: lineage}, nil
}

// peekHead reads the top-level serial and lineage of a state document
// without verifying it, stopping once both are read (they come third and
// fourth in a document this package writes). ok is false when no serial can
// be read: the document is not a JSON object, or is cut before its serial.
func peekHead(data []byte) (serial int64, lineage string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, "", false
	}
	var haveLineage bool
	for dec.More() && !(ok && haveLineage) {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			break
		}
		switch tok {
		case "serial":
			if n, isNum := v.(json.Number); isNum {
				if i, err := n.Int64(); err == nil && i >= 0 {
					serial, ok = i, true
				}
			}
		case "lineage":
			lineage, haveLineage = v.(string)
		}
	}
	return serial, lineage, ok
}
