package breaking

import (
	"github.com/ordergen/ordergen/generator/ir"
	"github.com/ordergen/ordergen/generator/schema"
)

// brokers reports each broker of oe that ne no longer names, or on which
// it names another topic, exchange or queue: the older schema's consumers
// keep reading the old one. A broker added is compatible.
func (c *comparer) brokers(oe, ne *ir.Entity, ns *schema.Entity) {
	for _, ob := range oe.Brokers {
		nb, ok := ne.Broker(ob.Kind)
		switch {
		case !ok:
			pos := ns.BrokersPos
			if pos.Line == 0 {
				pos = ns.Name.Pos
			}
			c.add(pos, BrokerAddressSame, "entity %s: broker %s was removed; consumers of the older schema read %s there", oe.Name, ob.Kind, ob.Address)
		case nb.Address != ob.Address:
			pos := ns.BrokersPos
			for _, b := range ns.Brokers {
				if b.Broker.Value == ob.Kind && b.Address != nil {
					pos = b.Address.Pos
				}
			}
			c.add(pos, BrokerAddressSame, "entity %s: on %s, %s became %s; consumers of the older schema read %s", oe.Name, ob.Kind, ob.Address, nb.Address, ob.Address)
		}
	}
}
