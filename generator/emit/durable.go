package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// durable emits, for each entity, what connects its dispatcher to a durable
// store (durable.Store, durable.TxStore): the transactional handler
// interface, the constructors of transactional subscribers, the guard that
// runs in the store's transaction, and the helper that takes a
// subscriber's stores from AccountConfig.Store.
func durable(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		txHandler(f, n)
		txConstructors(f, n)
		useStore(f, n)
		switch {
		case grouped(e) && e.Batch:
			handleBatchIn(f, n, true, true)
		case grouped(e):
			handleGroup(f, n)
		case e.Batch:
			handleBatch(f, n, true)
		default:
			handleTx(f, n)
		}
		if e.Resync {
			resync(f, n, true)
		}
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
func txStore() *jen.Statement { return du("TxStore").Types(sqlTx()) }

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
	Doc(f, 0, "%s binds a transactional subscriber to its handler and store.", n.TxBinding)
	f.Type().Id(n.TxBinding).Struct(
		jen.Id("h").Id(n.TxHandler),
		jen.Id("store").Add(txStore()),
	)
}

func txConstructors(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "%s returns a dispatcher whose first subscriber, named %q, is "+
		"the transactional handler h over store: the subscriber's versions, states "+
		"and parked events live in store under its name, and each event's handler "+
		"writes commit together with its version advance. opts change the schema's "+
		"policies. Close the dispatcher when done, then the store.%s", n.NewTxDispatcher, e.Name, groupStoreNote(e))
	f.Func().Id(n.NewTxDispatcher).Params(jen.Id("store").Add(txStore()), jen.Id("h").Id(n.TxHandler), jen.Id("opts").Op("...").Id(n.Option)).Params(jen.Op("*").Id(n.Dispatcher), jen.Error()).Block(
		jen.Id("d").Op(":=").Op("&").Id(n.Dispatcher).Add(Keyed(Field{"topic", rt("NewTopic").Types(n.key(), jen.Id(n.Event)).Call()})),
		jen.If(jen.Err().Op(":=").Id("d").Dot("subscribeTx").Call(jen.Lit(e.Name), jen.Id("store"), jen.Id("h"), jen.Id("opts")), jen.Err().Op("!=").Nil()).Block(
			jen.Return(jen.Nil(), jen.Err()),
		),
		jen.Return(jen.Id("d"), jen.Nil()),
	)

	Doc(f, 0, "SubscribeTx adds a transactional subscriber: h receives every event "+
		"published from now on, in its own lanes, inside transactions of store, with "+
		"its versions, states and parked events in store. Its runtime name (and its "+
		"namespace in store) is %q followed by name; names must be unique.", e.Name+"/")
	f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("SubscribeTx").Params(jen.Id("name").String(), jen.Id("store").Add(txStore()), jen.Id("h").Id(n.TxHandler), jen.Id("opts").Op("...").Id(n.Option)).Error().Block(
		jen.If(jen.Id("name").Op("==").Lit("")).Block(jen.Return(errorf(n.pkg()+": subscribe to "+e.Name+": empty subscriber name"))),
		jen.Return(jen.Id("d").Dot("subscribeTx").Call(jen.Lit(e.Name+"/").Op("+").Id("name"), jen.Id("store"), jen.Id("h"), jen.Id("opts"))),
	)

	f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("subscribeTx").Params(jen.Id("name").String(), jen.Id("store").Add(txStore()), jen.Id("h").Id(n.TxHandler), jen.Id("opts").Index().Id(n.Option)).Error().Block(
		jen.If(jen.Id("store").Op("==").Nil()).Block(jen.Return(errorf(n.pkg()+": subscribe %s: nil store", jen.Id("name")))),
		jen.If(jen.Id("h").Op("==").Nil()).Block(jen.Return(errorf(n.pkg()+": subscribe %s: nil handler", jen.Id("name")))),
		jen.Return(jen.Id("d").Dot("subscribe").Call(jen.Id("name"), jen.Nil(), jen.Op("&").Id(n.TxBinding).Add(Keyed(Field{"h", jen.Id("h")}, Field{"store", jen.Id("store")})), jen.Id("opts"))),
	)
}

// useStore emits the helper that fills a subscriber's stores from a
// durable store.
func useStore(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "%s fills in the stores that cfg leaves nil from cfg.Store (from the "+
		"transactional store of tx, when given), in the namespace name.", n.UseStore)
	f.Func().Id(n.UseStore).Params(jen.Id("cfg").Op("*").Id(n.Config), jen.Id("name").String(), jen.Id("tx").Op("*").Id(n.TxBinding)).BlockFunc(func(g *jen.Group) {
		g.If(jen.Id("tx").Op("!=").Nil()).Block(jen.Id("cfg").Dot("Store").Op("=").Id("tx").Dot("store"))
		g.If(jen.Id("cfg").Dot("Store").Op("==").Nil()).Block(jen.Return())
		if e.Version != nil {
			g.If(jen.Id("cfg").Dot("Versions").Op("==").Nil()).Block(
				jen.Id("cfg").Dot("Versions").Op("=").Add(du("EncodedVersions")).Types(n.key()).Call(jen.Id("cfg").Dot("Store").Dot("Versions").Call(jen.Id("name"))),
			)
		}
		if e.HasStateGuard() {
			g.If(jen.Id("cfg").Dot("States").Op("==").Nil()).Block(
				jen.Id("cfg").Dot("States").Op("=").Add(du("EncodedStates")).Types(n.key()).Call(jen.Id("cfg").Dot("Store").Dot("States").Call(jen.Id("name"))),
			)
		}
		g.If(jen.Id("cfg").Dot("Parks").Op("==").Nil()).Block(
			jen.Id("cfg").Dot("Parks").Op("=").Add(du("EncodedParks")).Types(n.key(), jen.Id(n.Event)).Call(jen.Id("cfg").Dot("Store").Dot("Parks").Call(jen.Id("name")), jen.Id(n.Codec).Values()),
		)
	})

	handler, guard, txGuard := "Handler", "handle", "handleTx"
	if e.Batch {
		handler, guard, txGuard = "BatchHandler", "handleBatch", "handleBatchTx"
	}
	kind := map[bool]string{true: "batch handler", false: "handler"}[e.Batch]
	if grouped(e) {
		Doc(f, 0, "engineHandler returns the engine %s of a subscriber that is not "+
			"transactional: a transactional one commits through its group (handleGroup).", kind)
		f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id("engineHandler").Params().Add(rt(handler)).Types(n.key(), jen.Id(n.Event)).Block(
			jen.Return(jen.Id("s").Dot(guard)),
		)
	} else {
		Doc(f, 0, "engineHandler returns the subscriber's engine %s: the transactional "+
			"guard for a transactional subscriber.", kind)
		f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id("engineHandler").Params().Add(rt(handler)).Types(n.key(), jen.Id(n.Event)).Block(
			jen.If(jen.Id("s").Dot("tx").Op("!=").Nil()).Block(jen.Return(jen.Id("s").Dot(txGuard))),
			jen.Return(jen.Id("s").Dot(guard)),
		)
	}
	if e.Resync {
		Doc(f, 0, "resyncer returns the subscriber's runtime.ResyncFunc: the transactional "+
			"one for a transactional subscriber.")
		f.Func().Params(jen.Id("s").Op("*").Id(n.Subscriber)).Id("resyncer").Params().Add(rt("ResyncFunc")).Types(n.key(), jen.Id(n.Event)).Block(
			jen.If(jen.Id("s").Dot("tx").Op("!=").Nil()).Block(jen.Return(jen.Id("s").Dot("resyncTx"))),
			jen.Return(jen.Id("s").Dot("resync")),
		)
	}
}

// keyText returns the code of key's text form, as durable.EncodeKey gives it.
func keyText(n names) jen.Code { return keyTextOf(n, func() *jen.Statement { return jen.Id("key") }) }

// keyTextOf returns the code of the text form of the key that key's code
// gives.
func keyTextOf(n names, key func() *jen.Statement) jen.Code {
	t := n.e.Key.Type
	switch {
	case t.Name == "string":
		return key()
	case unsigned(t):
		arg := key()
		if t.Name != "uint64" {
			arg = jen.Uint64().Call(key())
		}
		return jen.Qual("strconv", "FormatUint").Call(arg, jen.Lit(10))
	}
	arg := key()
	if t.Name != "int64" {
		arg = jen.Int64().Call(key())
	}
	return jen.Qual("strconv", "FormatInt").Call(arg, jen.Lit(10))
}
