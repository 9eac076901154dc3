package deploy

import (
	"errors"
	"fmt"
	"os"

	"github.com/deployer-dev/deployer/internal/config"
)

// ErrConfigExists is returned by WriteStarterConfig when the file exists and
// force is false.
var ErrConfigExists = errors.New("config file exists")

// WriteStarterConfig writes the commented starter deployer.yaml
// (config.Init) to path, the use case of `deployer init`
// (docs/commands.md). An existing file is left untouched and
// ErrConfigExists returned, unless force is set: then it is overwritten.
// Other errors are the file system's.
func WriteStarterConfig(path string, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	fh, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s: %w", path, ErrConfigExists)
	}
	if err != nil {
		return err
	}
	if _, err := fh.Write(config.Init()); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
