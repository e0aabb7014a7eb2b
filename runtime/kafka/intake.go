package kafka

import "context"

// IntakeReason says why the consumer stopped taking records.
type IntakeReason uint8

const (
	intakeOpen IntakeReason = iota
	// IntakeInFlight: Config.MaxInFlight records are taken and not
	// finished; the consumer takes more as they finish.
	IntakeInFlight
	// IntakeParked: as IntakeInFlight, and records parked in memory hold
	// at least half of MaxInFlight: they finish only when their parks are
	// resolved (Replay or Discard), so every partition of the consumer
	// waits for an operator. It lasts until they hold less than half of
	// it, while the consumer crawls on the room left.
	IntakeParked
)

var intakeNames = [...]string{intakeOpen: "", IntakeInFlight: "in_flight", IntakeParked: "parked"}

// String returns the reason's name, as in logs and metrics ("in_flight",
// "parked"; "" while records are taken).
func (r IntakeReason) String() string {
	if int(r) < len(intakeNames) {
		return intakeNames[r]
	}
	return "IntakeReason(?)"
}

// noteIntake records whether the feeder waits for MaxInFlight room (full)
// and why, logging each change that an operator must see: parked records
// holding the intake at Warn, its end at Info. Once parked records held
// the intake, the state stays IntakeParked until they hold less than half
// of MaxInFlight, so that a consumer crawling on the room left is not
// reported blocked and free again at every record.
func (c *Consumer[K, E]) noteIntake(full bool) {
	c.mu.Lock()
	was := c.intake
	c.mu.Unlock()
	why := intakeOpen
	parked := 0
	if full || was == IntakeParked {
		for _, p := range c.all() {
			_, n := c.source().UnsettledOf(p.own)
			parked += n
		}
		switch {
		case 2*parked >= c.cfg.MaxInFlight && (full || was == IntakeParked):
			why = IntakeParked
		case full:
			why = IntakeInFlight
		}
	}
	c.mu.Lock()
	c.intake = why
	c.mu.Unlock()
	switch {
	case why == was:
	case why == IntakeParked:
		c.cfg.Logger.Warn("ordergen/kafka: the consumer stopped taking records: records parked in memory hold its MaxInFlight; every partition waits until their parks are resolved (replay or discard the parked keys, see the dispatcher's ParkedKeys), or use a park store",
			"parked", parked, "max_in_flight", c.cfg.MaxInFlight, "group", c.cfg.Group)
	case was == IntakeParked:
		c.cfg.Logger.Info("ordergen/kafka: the consumer takes records again: the parked records no longer hold its MaxInFlight", "group", c.cfg.Group, "parked", parked, "now", why.String())
	default:
		c.cfg.Logger.Log(context.Background(), -4, "ordergen/kafka: intake", "now", why.String(), "was", was.String())
	}
}
