package faulttest

import (
	"bytes"
	"net"
	"sync"
	"testing"
)

// TCPDropper is a TCP proxy in front of a Redis or PostgreSQL server. An armed
// rule waits for a client message containing its pattern, forwards it, and
// when the server's reply arrives closes the client's connection instead of
// passing the reply on: the server applied the command, its reply was lost.
// Safe for concurrent use.
type TCPDropper struct {
	Addr     string // 127.0.0.1:PORT, the address to give the client
	upstream string

	mu       sync.Mutex
	patterns [][]byte
	dropped  int
}

// NewTCPDropper starts a proxy in front of upstream ("host:port"); it stops
// when the test ends.
func NewTCPDropper(tb testing.TB, upstream string) *TCPDropper {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	d := &TCPDropper{Addr: ln.Addr().String(), upstream: upstream}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", upstream)
			if err != nil {
				_ = c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); d.pipe(c, s) }()
		}
	}()
	tb.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return d
}

// DropNext arms a rule: the reply to the next client message containing
// pattern is dropped, and that connection closed.
func (d *TCPDropper) DropNext(pattern string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.patterns = append(d.patterns, []byte(pattern))
}

// Armed reports how many rules have not fired yet.
func (d *TCPDropper) Armed() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.patterns)
}

// Dropped reports how many replies were dropped.
func (d *TCPDropper) Dropped() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dropped
}

// pipe copies client c <-> server s; a client chunk that matches an armed
// rule makes the next server chunk close both instead of being forwarded.
func (d *TCPDropper) pipe(c, s net.Conn) {
	defer c.Close()
	defer s.Close()
	dropNext := make(chan struct{}, 1)
	go func() {
		defer s.Close()
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				if d.match(buf[:n]) {
					dropNext <- struct{}{}
				}
				if _, werr := s.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			select {
			case <-dropNext:
				return // the reply is lost with the connection
			default:
			}
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (d *TCPDropper) match(chunk []byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, p := range d.patterns {
		if bytes.Contains(chunk, p) {
			d.patterns = append(d.patterns[:i], d.patterns[i+1:]...)
			d.dropped++
			return true
		}
	}
	return false
}
