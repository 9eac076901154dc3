package faulttest

import (
	"net/url"
	"testing"
)

// ViaTCP returns rawURL (redis://, postgres://) with its host:port replaced by
// a TCPDropper in front of the original host:port.
func ViaTCP(tb testing.TB, rawURL string) (string, *TCPDropper) {
	tb.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		tb.Fatalf("parse %q: %v", rawURL, err)
	}
	d := NewTCPDropper(tb, u.Host)
	u.Host = d.Addr
	return u.String(), d
}
