package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// transports emits what carries events between processes without naming a
// transport: a producer per entity that publishes to any transport.Sink
// (genimpl.Sink: the Kafka producer of runtime/kafka, for one),
// synchronously or, through a transport.AsyncSink, without waiting. The
// dispatcher's side of transport.Target (SubmitTagged, Withdraw,
// Subscriptions) is the genimpl.Dispatcher it embeds. Generated code never
// imports a transport: users without Kafka do not build it.
func transports(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		Doc(f, 0, "%s publishes %s events to a transport.Sink, such as the Kafka "+
			"producer of github.com/ordergen/ordergen/runtime/kafka, keyed by their %s, "+
			"and refuses what the dispatcher's Publish methods refuse. Consumers in other "+
			"processes feed the events to their %s with SubmitTagged. Its Publish (any %s "+
			"event) and PublishAsync are those of the genimpl.Producer it embeds.", n.Producer, e.Name, e.Key.Name, n.Dispatcher, e.Name)
		f.Type().Id(n.Producer).Struct(jen.Op("*").Id(n.ProducerCore))
		Doc(f, 0, "%s is the generic producer that %s embeds.", n.ProducerCore, n.Producer)
		f.Type().Id(n.ProducerCore).Op("=").Add(gi("Producer")).Types(n.key(), jen.Id(n.Event), n.bodyType())
		f.Var().Id("_").Id(n.Publisher).Op("=").Parens(jen.Op("*").Id(n.Producer)).Parens(jen.Nil())
		Doc(f, 0, "%s returns a producer that sends to sink; a nil sink is refused with "+
			"runtime.ErrInvalidConfig.", n.NewProducer)
		f.Func().Id(n.NewProducer).Params(jen.Id("sink").Add(gi("Sink")).Types(n.key(), jen.Id(n.Event))).Params(jen.Op("*").Id(n.Producer), jen.Error()).Block(
			jen.List(jen.Id("p"), jen.Err()).Op(":=").Add(gi("NewProducer")).Call(jen.Id(n.Entity), jen.Id("sink")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Op("&").Id(n.Producer).Values(jen.Id("p")), jen.Nil()),
		)
		for _, ev := range e.Events {
			Doc(f, 0, "%s sends e to the sink, keyed by e.%s (see Publish).", ev.Publish, e.Key.Name)
			f.Func().Params(jen.Id("p").Op("*").Id(n.Producer)).Id(ev.Publish).Params(ctxParam(), jen.Id("e").Id(ev.Name)).Error().Block(
				jen.Return(jen.Id("p").Dot("Publish").Call(jen.Id("ctx"), jen.Id("e"))),
			)
		}
	}
}
