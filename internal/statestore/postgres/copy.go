package postgres

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/deployer-dev/deployer/internal/statestore"
)

// pgEpoch is 2000-01-01 00:00:00 UTC in Unix microseconds: PostgreSQL's
// binary timestamptz counts microseconds from it.
const pgEpoch = 946684800 * 1_000_000

// eventCopy returns the rows of a COPY ... FROM STDIN (FORMAT binary) of
// deployer_state_events holding the event of req (the columns stack, env,
// serial, lineage, deployment_id, correlation_id, causation_id, created_at,
// document, in that order). The document is read from req.Document, not
// copied. The format is PostgreSQL's (COPY, "Binary Format").
func eventCopy(req statestore.WriteRequest, causation *string) (io.Reader, error) {
	if len(req.Document) > math.MaxInt32 {
		return nil, fmt.Errorf("the document is %d bytes, over PostgreSQL's limit for one value", len(req.Document))
	}
	var b bytes.Buffer
	b.WriteString("PGCOPY\n\xff\r\n\x00")
	b.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0}) // flags, header extension length
	b.Write(binary.BigEndian.AppendUint16(nil, 9))
	text := func(s string) {
		b.Write(binary.BigEndian.AppendUint32(nil, uint32(len(s))))
		b.WriteString(s)
	}
	int8 := func(v int64) {
		b.Write(binary.BigEndian.AppendUint32(nil, 8))
		b.Write(binary.BigEndian.AppendUint64(nil, uint64(v)))
	}
	text(req.Stack)
	text(req.Env)
	int8(req.Serial)
	text(req.Lineage)
	text(req.DeploymentID)
	text(req.DeploymentID)
	if causation == nil {
		b.Write([]byte{0xff, 0xff, 0xff, 0xff}) // NULL
	} else {
		text(*causation)
	}
	// Microseconds, truncated as pgx encodes a time.Time parameter.
	int8(req.Time.Unix()*1_000_000 + int64(req.Time.Nanosecond())/1000 - pgEpoch)
	b.Write(binary.BigEndian.AppendUint32(nil, uint32(len(req.Document))))
	trailer := []byte{0xff, 0xff} // end of data
	return io.MultiReader(&b, bytes.NewReader(req.Document), bytes.NewReader(trailer)), nil
}
