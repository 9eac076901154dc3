package file

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/deployer-dev/deployer/internal/inputfile"
	"github.com/deployer-dev/deployer/internal/lockmgr"
)

const (
	recordExt = ".json"
	fenceExt  = ".fence"
	// maxEncoded keeps "{enc}.fence" and temporary names under the 255-byte
	// file name limit of common file systems.
	maxEncoded = 200
)

// encodeKey returns the file name stem of key: bytes outside [a-z0-9_-]
// become %XX; a stem longer than maxEncoded becomes "~" + hex(sha256(key)).
func encodeKey(key string) string {
	const hexDigits = "0123456789ABCDEF"
	var sb strings.Builder
	sb.Grow(len(key) + 16)
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' {
			sb.WriteByte(c)
			continue
		}
		sb.WriteByte('%')
		sb.WriteByte(hexDigits[c>>4])
		sb.WriteByte(hexDigits[c&15])
	}
	if sb.Len() > maxEncoded {
		sum := sha256.Sum256([]byte(key))
		return "~" + hex.EncodeToString(sum[:])
	}
	return sb.String()
}

// decodeKey inverts encodeKey; ok is false for hashed stems, whose key is only
// known from the record inside.
func decodeKey(stem string) (key string, ok bool) {
	if strings.HasPrefix(stem, "~") {
		return "", false
	}
	key, err := url.PathUnescape(stem)
	return key, err == nil
}

// read returns the record stored under the stem name; lockmgr.ErrNotFound if
// there is none.
func (b *Backend) read(name string) (lockmgr.Record, error) {
	path := filepath.Join(b.dir, name+recordExt)
	data, err := inputfile.Read(path, "lock record", lockmgr.MaxRecordBytes)
	if isNotExist(err) {
		return lockmgr.Record{}, lockmgr.ErrNotFound
	}
	var tl *inputfile.TooLargeError
	if errors.As(err, &tl) {
		key, ok := decodeKey(name)
		if !ok {
			key = "in " + path
		}
		return lockmgr.Record{}, lockmgr.TooLarge(key, path, "rm '"+path+"'", tl.Size)
	}
	if err != nil && !inputfile.IsLimit(err) {
		return lockmgr.Record{}, fmt.Errorf("read lock record: %w", err)
	}
	var rec lockmgr.Record
	if err == nil {
		err = json.Unmarshal(data, &rec)
	}
	if err != nil || rec.LockKey == "" {
		if err == nil {
			err = fmt.Errorf("no lockKey")
		}
		return lockmgr.Record{}, fmt.Errorf("lock record %s is damaged: %v (make sure no deploy is running, then delete the file)", path, err)
	}
	return rec, nil
}

// write stores rec under the stem name atomically and durably.
func (b *Backend) write(name string, rec lockmgr.Record) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encode lock record: %w", err)
	}
	if err := writeFileAtomic(b.dir, name+recordExt, append(data, '\n'), true); err != nil {
		return fmt.Errorf("write lock record: %w", err)
	}
	return nil
}

// maxFenceBytes bounds a fence file: a decimal int64 and a newline fit in
// 20 bytes; anything much larger is not a fence deployer wrote.
const maxFenceBytes = 64

// readFence returns the last fence handed out for the stem name, 0 if none.
func (b *Backend) readFence(name string) (int64, error) {
	path := filepath.Join(b.dir, name+fenceExt)
	data, err := inputfile.Read(path, "fence file", maxFenceBytes)
	if isNotExist(err) {
		return 0, nil
	}
	if err != nil && !inputfile.IsLimit(err) {
		return 0, fmt.Errorf("read fence: %w", err)
	}
	var n int64
	if err == nil {
		n, err = strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	}
	if err != nil {
		return 0, fmt.Errorf("fence file %s is damaged: %v (write a number larger than any fence used, or delete it when no deploy is running)", path, err)
	}
	return n, nil
}

// writeFileAtomic replaces dir/name with data: a temporary file in dir is
// written, fsynced and renamed over the target; with syncParent the directory
// is fsynced too, making the rename durable. A crash leaves either the old or
// the new content, never a mix.
func writeFileAtomic(dir, name string, data []byte, syncParent bool) (err error) {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o600); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	if syncParent {
		return syncDir(dir)
	}
	return nil
}

// syncDir makes renames and removals in dir durable. Windows cannot fsync a
// directory; its renames are durable once they return.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
