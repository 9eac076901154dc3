package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/deployer-dev/deployer/internal/inputfile"
	"github.com/deployer-dev/deployer/internal/jsontree"
)

// WriteFile saves p as indented JSON for `deploy --plan` (docs/plan.md),
// mode 0600. The file holds masked diffs and the plan's Binding, whose
// secret values are keyed digests: no secret in plain text. It is written
// to a temporary file and renamed into place.
//
// mask (nil: none) is applied to every string of the file, keys and values:
// the masker of every known secret value, so a value secret by content
// rather than by key name (a connection string holding a password) is never
// written either.
func WriteFile(path string, p *Plan, mask func(string) string) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	if mask != nil {
		if data, err = maskStrings(data, mask); err != nil {
			return fmt.Errorf("encode plan: %w", err)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".deployer-plan-*")
	if err != nil {
		return fmt.Errorf("write plan %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write plan %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write plan %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o600); err != nil {
		return fmt.Errorf("write plan %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write plan %s: %w", path, err)
	}
	return nil
}

// maskStrings returns the JSON document data, indented, with mask applied
// to every string in it (never to its numbers, booleans or syntax).
func maskStrings(data []byte, mask func(string) string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	v = jsontree.MapStrings(v, mask)
	return json.MarshalIndent(v, "", "  ")
}

// ReadFile reads a plan saved by WriteFile. It refuses files that are not
// JSON or whose format_version is not "deployer-plan-v1"; the error says to
// make the plan again.
func ReadFile(path string) (*Plan, error) {
	data, err := inputfile.Read(path, "plan file", inputfile.MaxPlanBytes)
	if err != nil {
		if inputfile.IsLimit(err) {
			return nil, err
		}
		return nil, fmt.Errorf("read plan: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("read plan %s: not a deployer plan (%v): make one with deployer plan --out FILE", path, err)
	}
	if p.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("read plan %s: format_version %q is not %q: make the plan again with deployer plan --out FILE", path, p.FormatVersion, FormatVersion)
	}
	return &p, nil
}
