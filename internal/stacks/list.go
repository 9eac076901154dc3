package stacks

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/deployer-dev/deployer/internal/inputfile"
)

// ListFile, at the root, narrows discovery (docs/many-stacks.md#deployer-stacksyaml):
//
//	stacks: [network, "services/*"]   # only these (default: every deployer.yaml found)
//	exclude: [sandbox]                # never these
//
// An entry is a directory relative to the root or a path.Match pattern;
// it matches that directory and every directory below it.
const ListFile = "deployer-stacks.yaml"

// maxListBytes bounds deployer-stacks.yaml.
const maxListBytes = 1 << 20

type list struct {
	path    string
	Stacks  []string `yaml:"stacks"`
	Exclude []string `yaml:"exclude"`
}

// readList reads root's deployer-stacks.yaml; none is an empty list.
func readList(root string) (*list, error) {
	p := filepath.Join(root, ListFile)
	data, err := inputfile.Read(p, "stack list", maxListBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &list{}, nil
	}
	if err != nil {
		return nil, err
	}
	l := &list{path: p}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(l); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %v (want stacks: [DIR, ...] and exclude: [DIR, ...])", p, err)
	}
	for _, group := range [][]string{l.Stacks, l.Exclude} {
		for _, pat := range group {
			if _, err := path.Match(clean(pat), ""); err != nil || pat == "" {
				return nil, fmt.Errorf("%s: %q is not a directory or pattern relative to %s", p, pat, root)
			}
		}
	}
	return l, nil
}

func clean(pat string) string {
	return strings.TrimSuffix(path.Clean(filepath.ToSlash(pat)), "/")
}

// matches reports whether pat matches dir or one of its parents.
func matches(pat, dir string) bool {
	pat = clean(pat)
	for d := dir; ; d = path.Dir(d) {
		if ok, _ := path.Match(pat, d); ok {
			return true
		}
		if !strings.Contains(d, "/") {
			return false
		}
	}
}

// filter applies the list to the directories found.
func (l *list) filter(dirs []string) ([]string, error) {
	var out []string
	used := make([]bool, len(l.Stacks))
	for _, d := range dirs {
		keep := len(l.Stacks) == 0
		for i, pat := range l.Stacks {
			if matches(pat, d) {
				keep, used[i] = true, true
			}
		}
		for _, pat := range l.Exclude {
			if matches(pat, d) {
				keep = false
			}
		}
		if keep {
			out = append(out, d)
		}
	}
	for i, u := range used {
		if !u {
			return nil, fmt.Errorf("%s: stacks: %q matches no directory with a %s: fix the path or remove it", l.path, l.Stacks[i], ConfigFile)
		}
	}
	return out, nil
}
