package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// transports emits what carries events between processes without naming a
// transport: a producer per entity that publishes to any transport.Sink (the
// Kafka producer of runtime/kafka, for one), synchronously or, through a
// transport.AsyncSink, without waiting; and the dispatcher's side of
// transport.Target (SubmitTagged, Withdraw, Subscriptions), through which a
// consumer (runtime/kafka's) feeds the lanes, learns from each subscriber's
// OnOutcome when a record is finished, and takes back the events of a
// partition it no longer owns. Generated code never imports a transport:
// users without Kafka do not build it.
func transports(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		producer(f, n)
		submitTagged(f, n)
		withdraw(f, n)
		check(f, n)
	}
}

func producer(f *jen.File, n names) {
	e := n.e
	name := n.Producer
	ctx := func() jen.Code { return jen.Id("ctx").Qual("context", "Context") }
	sink := tr("Sink").Types(n.key(), jen.Id(n.Event))
	Doc(f, 0, "%s publishes %s events to a transport.Sink, such as the Kafka producer "+
		"of github.com/ordergen/ordergen/runtime/kafka, keyed by their %s. "+
		"It implements %s and refuses what the dispatcher's Publish "+
		"methods refuse. Consumers in other processes feed the events to their "+
		"%s with SubmitTagged.", name, e.Name, e.Key.Name, n.Publisher, n.Dispatcher)
	f.Type().Id(name).Struct(
		jen.Id("sink").Add(sink),
	)
	f.Var().Id("_").Id(n.Publisher).Op("=").Parens(jen.Op("*").Id(name)).Parens(jen.Nil())

	Doc(f, 0, "%s returns a producer that sends to sink; a nil sink is refused "+
		"with runtime.ErrInvalidConfig.", n.NewProducer)
	f.Func().Id(n.NewProducer).Params(jen.Id("sink").Add(sink)).Params(jen.Op("*").Id(name), jen.Error()).Block(
		jen.If(jen.Id("sink").Op("==").Nil()).Block(jen.Return(jen.Nil(), errorf("%w: "+name+" needs a sink", rt("ErrInvalidConfig")))),
		jen.Return(jen.Op("&").Id(name).Add(Keyed(Field{"sink", jen.Id("sink")})), jen.Nil()),
	)
	recv := func() *jen.Statement { return jen.Params(jen.Id("p").Op("*").Id(name)) }
	for _, ev := range e.Events {
		Doc(f, 0, "%s sends e to the sink, keyed by e.%s, and returns once the "+
			"sink took it. It refuses what the dispatcher's Publish methods refuse, "+
			"with an error wrapping runtime.ErrInvalidEvent.", ev.Publish, e.Key.Name)
		f.Func().Add(recv()).Id(ev.Publish).Params(ctx(), jen.Id("e").Id(ev.Name)).Error().Block(
			jen.If(jen.List(jen.Id("_"), jen.Err()).Op(":=").Id(n.Check).Call(jen.Id("e")), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
			jen.Return(jen.Id("p").Dot("sink").Dot("Send").Call(jen.Id("ctx"), jen.Id("e").Dot(e.Key.Name), jen.Id("e"))),
		)
	}
	Doc(f, 0, "Publish sends any %s event to the sink, as its Publish method does. A "+
		"nil e is refused with runtime.ErrInvalidEvent.", e.Name)
	f.Func().Add(recv()).Id("Publish").Params(ctx(), jen.Id("e").Id(n.Event)).Error().Block(
		jen.List(jen.Id("ev"), jen.Err()).Op(":=").Id(n.Check).Call(jen.Id("e")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Return(jen.Id("p").Dot("sink").Dot("Send").Call(jen.Id("ctx"), jen.Id("ev").Dot("EventKey").Call(), jen.Id("ev"))),
	)
	publishAsync(f, n)
}

func publishAsync(f *jen.File, n names) {
	Doc(f, 0, "PublishAsync sends e to the sink without waiting for the broker when the sink "+
		"is a transport.AsyncSink (the Kafka producer is), and calls done once with the "+
		"answer, perhaps before it returns; with another sink it sends synchronously, then "+
		"calls done (transport.SendKeyed). A key's events keep the order of the calls, and "+
		"after a send of a key fails, the key's later sends fail with transport.ErrKeyPaused "+
		"until the sink's Resume. It refuses, through done, what the Publish methods "+
		"refuse, with an error wrapping runtime.ErrInvalidEvent. done runs on the "+
		"transport's goroutine: it must be fast and must not block; nil means the answer "+
		"is not wanted.")
	f.Func().Params(jen.Id("p").Op("*").Id(n.Producer)).Id("PublishAsync").Params(
		jen.Id("ctx").Qual("context", "Context"), jen.Id("e").Id(n.Event), jen.Id("done").Func().Params(jen.Error()),
	).Block(
		jen.List(jen.Id("ev"), jen.Err()).Op(":=").Id(n.Check).Call(jen.Id("e")),
		tr("SendKeyed").Call(jen.Id("ctx"), jen.Id("p").Dot("sink"), jen.Id("ev"), jen.Err(), jen.Id("done")),
	)
}

func submitTagged(f *jen.File, n names) {
	Doc(f, 0, "SubmitTagged hands e, with tag, to the subscribers numbered from and up (0 is "+
		"the first, in subscription order), for transports such as the Kafka consumer "+
		"of github.com/ordergen/ordergen/runtime/kafka: each subscriber reports e's "+
		"outcome with tag to the OnOutcome of its %s, so a record is finished "+
		"when every subscriber that holds it reported. It returns how many subscribers "+
		"hold e afterwards. It stops at the first subscriber that refuses e "+
		"(runtime.ErrBacklogFull, runtime.ErrClosed, ctx's error) and returns the "+
		"refusal: call it again with from set to the number returned, so that no "+
		"subscriber gets e twice. It refuses, before any subscriber gets it, what the "+
		"Publish methods refuse (runtime.ErrInvalidEvent), and refuses everything "+
		"with runtime.ErrInvalidConfig while a subscriber has no OnOutcome: its "+
		"transport would never learn that its events finished.", n.Config)
	f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("SubmitTagged").Params(
		jen.Id("ctx").Qual("context", "Context"), jen.Id("e").Id(n.Event), jen.Id("tag").Uint64(), jen.Id("from").Int(),
	).Params(jen.Int(), jen.Error()).Block(
		jen.List(jen.Id("ev"), jen.Err()).Op(":=").Id(n.Check).Call(jen.Id("e")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("from"), jen.Err())),
		jen.List(jen.Id("n"), jen.Err()).Op(":=").Id("d").Dot("topic").Dot("SubmitTagged").Call(jen.Id("ctx"), jen.Id("ev").Dot("EventKey").Call(), jen.Id("ev"), jen.Id("tag"), jen.Id("from")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("n"), errorf(n.pkg()+": %w", jen.Err()))),
		jen.Return(jen.Id("n"), jen.Nil()),
	)
}

func withdraw(f *jen.File, n names) {
	f.Var().Id("_").Add(tr("Target")).Types(jen.Id(n.Event)).Op("=").Parens(jen.Op("*").Id(n.Dispatcher)).Parens(jen.Nil())
	Doc(f, 0, "Withdraw takes back, in every subscriber, the events given to SubmitTagged "+
		"whose tag match selects and that have not started, for a transport that no longer "+
		"owns where they came from (a Kafka partition that moved to another consumer): they "+
		"never start and report runtime.Withdrawn. It waits for the selected events that "+
		"running lanes took, and when ctx ends first it cancels their attempts' contexts "+
		"and returns ctx's error (see runtime.Engine.Withdraw). It returns how many events "+
		"it withdrew.")
	f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("Withdraw").Params(
		jen.Id("ctx").Qual("context", "Context"), jen.Id("match").Func().Params(jen.Id("tag").Uint64()).Bool(),
	).Params(jen.Int(), jen.Error()).Block(
		jen.List(jen.Id("n"), jen.Err()).Op(":=").Id("d").Dot("topic").Dot("Withdraw").Call(jen.Id("ctx"), jen.Id("match")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id("n"), errorf(n.pkg()+": %w", jen.Err()))),
		jen.Return(jen.Id("n"), jen.Nil()),
	)
	Doc(f, 0, "Subscriptions describes the subscribers, in subscription order, for the "+
		"checks a transport makes before it feeds the dispatcher (transport.CheckSubscriptions: "+
		"every subscriber reports outcomes, none drops events, all park alike).")
	f.Func().Params(jen.Id("d").Op("*").Id(n.Dispatcher)).Id("Subscriptions").Params().Index().Add(tr("Subscription")).Block(
		jen.Return(tr("TopicSubscriptions").Call(jen.Id("d").Dot("topic"))),
	)
}

func check(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "%s returns e as a value (e may point to an event), or refuses, with an "+
		"error wrapping runtime.ErrInvalidEvent, a nil e or %s %s event that the "+
		"dispatcher's Publish methods refuse.", n.Check, Article(e.Name), e.Name)
	f.Func().Id(n.Check).Params(jen.Id("e").Id(n.Event)).Params(jen.Id(n.Event), jen.Error()).BlockFunc(func(g *jen.Group) {
		g.Id("e").Op("=").Id(n.Value).Call(jen.Id("e"))
		g.If(jen.Id("e").Op("==").Nil()).Block(jen.Return(jen.Nil(), errorf("%w: nil "+e.Name+" event", rt("ErrInvalidEvent"))))
		prefix := "%w: " + e.Name + " event %s: "
		if e.Key.Type.Name == "string" {
			g.If(jen.Id("e").Dot("EventKey").Call().Op("==").Lit("")).Block(jen.Return(
				jen.Nil(), errorf(prefix+"key field "+e.Key.Name+" is empty", rt("ErrInvalidEvent"), jen.Id("e").Dot("EventName").Call()),
			))
		}
		if v := e.Version; v != nil {
			value := jen.Id("e").Dot("EventVersion").Call()
			cond := jen.Id("e").Dot("EventVersion").Call().Op("==").Lit(0)
			if !unsigned(v.Type) {
				value = jen.Int64().Call(jen.Id("e").Dot("EventVersion").Call())
				cond = jen.Int64().Call(jen.Id("e").Dot("EventVersion").Call()).Op("<").Lit(1)
			}
			g.If(cond).Block(jen.Return(
				jen.Nil(), errorf(prefix+"version field "+v.Name+" is %d, below 1", rt("ErrInvalidEvent"), jen.Id("e").Dot("EventName").Call(), value),
			))
		}
		g.Return(jen.Id("e"), jen.Nil())
	})
}
