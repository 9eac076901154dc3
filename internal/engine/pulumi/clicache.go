package pulumi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

// What deployer learnt of a Pulumi CLI binary is kept on disk, so a deploy
// does not ask the CLI again what cannot have changed
// (docs/pulumi.md#what-deployer-asks-pulumi): its version, for as long as
// the binary at that path has the same modification time and size, and the
// provider plugins `pulumi plugin ls` listed, for as long as the plugin
// directory has the same modification time too (installing or removing a
// plugin changes it). The cache is a hint: a file that cannot be read,
// written or parsed is a miss, never an error.

// cliFacts is the cache file of one CLI binary.
type cliFacts struct {
	Path    string `json:"path"`
	ModTime int64  `json:"mtime_ns"`
	Size    int64  `json:"size"`
	Version string `json:"version"`
	// Plugins is what `pulumi plugin ls --json` listed, read while the
	// plugin directory PluginDir had modification time PluginDirTime.
	PluginDir     string                     `json:"plugin_dir,omitempty"`
	PluginDirTime int64                      `json:"plugin_dir_mtime_ns,omitempty"`
	Plugins       map[string]map[string]bool `json:"plugins,omitempty"`
}

// maxFactsSize bounds the cache file read: a version and a plugin list.
const maxFactsSize = 1 << 20

// cliCacheDir is where the cache files live: deployer/pulumi-cli under the
// user's cache directory; "" when there is none.
func cliCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "deployer", "pulumi-cli")
}

func factsFile(path string) string {
	dir := cliCacheDir()
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".json")
}

// loadFacts returns the cached facts of the CLI at path when they are of the
// binary there now (same modification time and size), else nil.
func loadFacts(path string) *cliFacts {
	fi, err := os.Stat(path)
	file := factsFile(path)
	if err != nil || file == "" {
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, over, err := inputfile.ReadAtMost(f, maxFactsSize)
	if err != nil || over {
		return nil
	}
	var facts cliFacts
	if json.Unmarshal(data, &facts) != nil || facts.Path != path || facts.ModTime != fi.ModTime().UnixNano() || facts.Size != fi.Size() || facts.Version == "" {
		return nil
	}
	return &facts
}

// saveFacts records facts of the CLI at path (as it is now on disk),
// replacing the file atomically; failures are ignored.
func saveFacts(path string, facts cliFacts) {
	fi, err := os.Stat(path)
	file := factsFile(path)
	if err != nil || file == "" {
		return
	}
	facts.Path, facts.ModTime, facts.Size = path, fi.ModTime().UnixNano(), fi.Size()
	data, err := json.Marshal(facts)
	if err != nil || os.MkdirAll(filepath.Dir(file), 0o755) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".facts-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// pluginDir is the directory Pulumi keeps provider plugins in:
// $PULUMI_HOME/plugins, else ~/.pulumi/plugins; "" when unknown.
func pluginDir() string {
	home := os.Getenv("PULUMI_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		home = filepath.Join(h, ".pulumi")
	}
	return filepath.Join(home, "plugins")
}

// dirTime is the modification time of dir in ns; 0 when it cannot be read.
func dirTime(dir string) int64 {
	fi, err := os.Stat(dir)
	if err != nil || dir == "" {
		return 0
	}
	return fi.ModTime().UnixNano()
}
