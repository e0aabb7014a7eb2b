// Package keyed is for ordergen's transports whose broker orders by key: the
// consumer core that runtime/pubsub (ordering keys) and runtime/sqs (FIFO
// message groups) share. It is internal: users meet it through those
// packages.
//
// Such a broker hands out a key's messages in order and holds back the
// key's later messages while earlier ones are unsettled (SQS FIFO locks the
// group; Pub/Sub redelivers every later message of a key after a nack or an
// expired lease). The broker's unit of order is the key itself, so the core
// keeps one ownership (transport.Ownership) per key it holds messages of:
// it starts with the key's first message taken and ends when the last one
// is settled, or earlier:
//
//   - when one of the key's messages is settled Unfinished (the broker
//     delivers it again, and the key's later messages after it): the key's
//     other messages must not run here, so the ownership ends and they are
//     given back too;
//   - when a message's lease is about to end for good (Pub/Sub's
//     MaxExtension, SQS's 12 hours of visibility): the broker will deliver
//     the key elsewhere;
//   - when a message's lease was lost (LeaseLost: the broker refused an
//     extension) or is about to lapse (LeaseLapsed: the lease the broker
//     last confirmed ends, because extensions failed or went unanswered):
//     the broker may deliver the key elsewhere any moment;
//   - when the consumer stops.
//
// An ending ownership withdraws the key's events that have not started,
// waits (up to Config.EndTimeout, and the lease; not at all when the lease
// was lost or lapses) for the running one, cancels it with a cause that
// says why (context.Cause of the handler's context: an error wrapping
// transport.ErrOwnershipEnded, or transport.ErrLeaseLost for a lease), and
// settles the rest Unfinished. Messages of the key that arrive meanwhile
// wait, and are taken under the key's next ownership. With Config.Fence
// (Pub/Sub, where a stream may carry later messages of a key sent before
// the nack) messages of the key that arrive after the ownership ended and
// before the first message it gave back comes again are given back too:
// they are stale, and the broker delivers them again after it.
//
// Messages the lanes refuse for lack of room wait, with the later messages
// of their key, in the key's stash, and are offered again as messages
// settle: a full key holds up only itself. Room for messages overall
// (Config.MaxInFlight) is the transport's to respect: it reserves room
// with Reserve before it takes a message from the broker, and each
// Receive uses one slot. A reservation, not a look at Room, because a
// transport's receivers run at once (Pub/Sub's callbacks of different
// keys, SQS's receive calls) and two of them could otherwise take the
// last slot both. Messages waiting for their key's ownership to end keep
// their room while they are received again.
package keyed
