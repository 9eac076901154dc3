package proc

import "bytes"

// Capped is a child's output kept in memory up to a bound: the first Max
// bytes, with Over noting that more were written. It never fails a write,
// so the child never sees EPIPE for it. One writer at a time (the copy
// goroutine of exec.Cmd).
type Capped struct {
	Max  int64
	Over bool
	b    bytes.Buffer
}

func (c *Capped) Write(p []byte) (int, error) {
	if room := c.Max - int64(c.b.Len()); int64(len(p)) > room {
		c.Over = true
		if room > 0 {
			c.b.Write(p[:room])
		}
		return len(p), nil
	}
	c.b.Write(p)
	return len(p), nil
}

// Bytes returns what was kept.
func (c *Capped) Bytes() []byte { return c.b.Bytes() }
