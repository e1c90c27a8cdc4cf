package memory

// Config is the configuration of Open, and of valkeyrie.NewStore under
// StoreName (which may be given nil, the same as &Config{}).
type Config struct {
	// Name names the backend: handles opened with the same name in this
	// process share one backend. Open needs it; valkeyrie.NewStore takes the name from
	// endpoints[0] and uses Name only when endpoints is empty.
	Name string
}
