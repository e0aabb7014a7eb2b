// Package netfault is for tests of transports: a network in the test's
// process, between clients and the servers they reach, that the test cuts,
// stalls and resumes on demand. Every connection made through a Net passes
// a TCP proxy of the Net (one listener per server address), so a client
// whose address or dialer can be set (a broker URL, an endpoint, a
// kgo.Dialer, a gRPC or HTTP dialer) can be put behind it without changing
// the client.
//
// A Net is up, stalled or cut:
//
//   - Cut kills every connection open through it (both ends are reset, as
//     when a middlebox drops a flow or a host dies) and refuses new ones
//     (accepted, then reset at once) until Resume;
//   - Stall keeps the connections open and holds every byte sent either
//     way, on new connections too, until Resume (a network that silently
//     stopped delivering: the client's writes succeed and no answer comes);
//   - Resume lets bytes through again and accepts new connections; the
//     bytes held by a stall go on in order.
//
// Nothing waits on a clock: a test that must know the fault hit waits on
// the Net's own figures (Await with a condition on Stats: a connection
// refused while cut, bytes held while stalled), which change exactly when
// the proxy acts.
//
//	n := netfault.New()
//	defer n.Close()
//	addr, _ := n.Proxy(serverAddr) // connect the client to addr instead
//	...
//	n.Stall()
//	_ = n.Await(ctx, func(s netfault.Stats) bool { return s.Held > 0 }) // the client tried to talk
//	n.Resume()
package netfault
