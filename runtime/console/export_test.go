package console

// NewSampled is New with sampled called after each round of samples.
func NewSampled(cfg Config, sampled func()) (*Console, error) { return newConsole(cfg, sampled) }
