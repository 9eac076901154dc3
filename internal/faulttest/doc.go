// Package faulttest injects network faults between deployer and a test
// server. ReplyDropper is an HTTP proxy (DynamoDB, S3) and TCPDropper a TCP
// proxy (Redis, PostgreSQL) that forward a matching request, let the server
// apply it, and then close the client's connection instead of passing the
// reply on: the write committed, its reply was lost, and the client retries
// or reads back. ReplyDropper can also cut the network (Partition). Dropping
// one reply after the server acted is not something toxiproxy's toxics can
// do, hence these small proxies.
//
// It is test support: only tests import it.
package faulttest
