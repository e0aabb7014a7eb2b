package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// durable emits, for each entity, the handler of a dispatcher over a
// durable store (genimpl.TxStore): the transactional handler interface and
// the adapter of the handler to the guards that run in the store's
// transactions. The constructors of transactional subscribers stand beside
// the others (dispatcher).
func durable(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		txHandler(f, n)
		handlerAdapter(f, n, true)
	}
}

// groupNote is what the transactional handler's doc says of group commit,
// "" for an entity without group:.
func groupNote(e *ir.Entity) string {
	if !grouped(e) {
		return ""
	}
	return "\n\nThe schema asks for group commit (group:): the transaction is shared with " +
		"the work of other keys (runtime/groupcommit), and commits when the group does. " +
		"A method may then be called again for the same event after a group-mate's " +
		"failure, a conflict with another writer, or its own eviction past the group's " +
		"MaxWork (its context ends with groupcommit.ErrEvicted): what it did in tx is " +
		"rolled back each time, so it must write through tx only."
}

// groupStoreNote is what the transactional constructors' doc says of the
// store of a grouped entity.
func groupStoreNote(e *ir.Entity) string {
	if !grouped(e) {
		return ""
	}
	return " The schema asks for group commit (group:, the Config's Group): store must " +
		"be a durable.GroupTxStore[*sql.Tx] (runtime/sqlstore's is), or it is an error."
}

// sqlTx is the transaction type transactional handlers receive.
func sqlTx() *jen.Statement { return jen.Op("*").Qual("database/sql", "Tx") }

// txStore is the store type of transactional subscribers.
func txStore() *jen.Statement { return gi("TxStore") }

func txHandler(f *jen.File, n names) {
	e := n.e
	what := "one typed method per event"
	switch {
	case e.Notification:
		what = "one method that is told a key changed"
	case e.Batch:
		what = "one method per batch of a key's events"
	}
	Doc(f, 0, "%s handles the events of entity %s inside a database transaction, "+
		"%s. A dispatcher made with %s (or "+
		"SubscribeTx) begins the transaction, reads the key's version and state in "+
		"it, lets the guards decide, calls the method with the transaction, and "+
		"commits the method's writes together with the new version and state: an "+
		"event is applied effectively once, even when the process dies in between. "+
		"A method writes through tx only and neither commits nor rolls it back; an "+
		"error rolls everything back and is retried in place (wrap it with "+
		"runtime.Permanent to apply the exhaustion policy at once).%s", n.TxHandler, e.Name, what, n.NewTxDispatcher, groupNote(e))
	f.Type().Id(n.TxHandler).InterfaceFunc(func(g *jen.Group) {
		handlerMethods(g, n, []jen.Code{jen.Id("tx").Add(sqlTx())})
	})
	unimplementedBase(f, n, n.TxHandler, n.UnimplementedTxHandler, []jen.Code{sqlTx()})
}

func txConstructors(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "%s returns a dispatcher whose first subscriber, named %q, is "+
		"the transactional handler h over store: the subscriber's versions, states "+
		"and parked events live in store under its name, and each event's handler "+
		"writes commit together with its version advance. opts change the schema's "+
		"policies. Close the dispatcher when done, then the store.%s", n.NewTxDispatcher, e.Name, groupStoreNote(e))
	f.Func().Id(n.NewTxDispatcher).Params(jen.Id("store").Add(txStore()), jen.Id("h").Id(n.TxHandler), jen.Id("opts").Op("...").Id(n.Option)).Params(jen.Op("*").Id(n.Dispatcher), jen.Error()).Block(
		newCore(n, gi("NewTx").Types(jen.Id(n.SubscriberName)).Call(jen.Id(n.Entity), jen.Id("store"), jen.Id(n.TxHandlerAdapter).Call(jen.Id("h")), jen.Id("opts")))...,
	)
	Doc(f, 0, "SubscribeTx adds a transactional subscriber: h receives every event "+
		"published from now on, in its own lanes, inside transactions of store, with "+
		"its versions, states and parked events in store. Its runtime name (and its "+
		"namespace in store) is %q followed by name; names must be unique.", e.Name+"/")
	f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("SubscribeTx").Params(jen.Id("name").String(), jen.Id("store").Add(txStore()), jen.Id("h").Id(n.TxHandler), jen.Id("opts").Op("...").Id(n.Option)).Error().Block(
		jen.Return(gi("SubscribeTx").Call(jen.Id("d").Dot(n.Core), jen.Id("name"), jen.Id("store"), jen.Id(n.TxHandlerAdapter).Call(jen.Id("h")), jen.Id("opts"))),
	)
}

// grouped reports whether e's transactional subscribers commit in groups
// (group:).
func grouped(e *ir.Entity) bool { return e.Policy.Group.On }
