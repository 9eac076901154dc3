package pulumi

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
)

// ensureLocalBackend creates the directory of a file:// Pulumi backend (the
// DIY backend refuses a missing one).
func ensureLocalBackend(backend string) error {
	if !strings.HasPrefix(backend, "file://") {
		return nil
	}
	u, err := url.Parse(backend)
	if err != nil {
		return fmt.Errorf("parse Pulumi backend %s: %w", backend, err)
	}
	if err := os.MkdirAll(u.Path, 0o755); err != nil {
		return fmt.Errorf("create Pulumi backend directory: %w", err)
	}
	return nil
}

// configString renders a stack config value as Pulumi stores it: strings as
// they are, anything else as JSON.
func configString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
