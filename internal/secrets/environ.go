package secrets

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// CommandLine returns the command line args is recorded as (a lock
// record's command, state locks, the audit log, another user's "lock is
// held" error): the program, argv[0], then the number of its arguments and
// a digest of them, "pulumi [3 args, sha256:0123456789ab]". No argument is
// written, so no form of secret argument (--password VALUE, -pVALUE,
// NAME=VALUE, https://user:VALUE@host, "Authorization: Bearer VALUE") can
// reach a record (docs/secrets.md#masked-everywhere,
// docs/decisions.md#lock-exec-records-the-program-and-a-digest). The
// digest is the first 12 hex digits of SHA-256 over the arguments, each
// prefixed by its length: two runs of the same command line have the same
// digest, different ones almost never do.
func CommandLine(args []string) string {
	if len(args) == 0 {
		return ""
	}
	if len(args) == 1 {
		return args[0]
	}
	h := sha256.New()
	for _, a := range args[1:] {
		h.Write([]byte(strconv.Itoa(len(a)) + ":" + a))
	}
	n := "args"
	if len(args) == 2 {
		n = "arg"
	}
	return args[0] + " [" + strconv.Itoa(len(args)-1) + " " + n + ", sha256:" + hex.EncodeToString(h.Sum(nil))[:12] + "]"
}
