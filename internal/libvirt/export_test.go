package libvirt

// Test-only access to pool internals.

// PoolSize is the pool's configured size.
func (c *Client) PoolSize() int { return c.rpc.MaxConnections() }
