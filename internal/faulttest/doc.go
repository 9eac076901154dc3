// Package faulttest injects network faults between deployer and a test
// server. ReplyDropper is an HTTP proxy that forwards a matching request,
// lets the server apply it, and then closes the client's connection instead
// of sending the reply: the write committed, its reply was lost, and the
// client (the AWS SDK) retries it. Cutting or slowing whole connections is
// toxiproxy's job; dropping one reply after the server acted is not something
// toxiproxy can do, hence this proxy.
//
// It is test support: only tests import it.
package faulttest
