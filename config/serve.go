package config

import "net"

// HostsWarning is what imprint serve warns about server.allowed_hosts once
// it listens: a non-loopback server.addr with no allowed host names serves
// only requests naming localhost or one of its IP addresses. "" when there
// is nothing to say.
func (c *Config) HostsWarning() string {
	host, _, _ := net.SplitHostPort(c.Server.Addr)
	if IsLoopback(host) || len(c.Server.AllowedHosts) > 0 {
		return ""
	}
	return "server.allowed_hosts is empty: only requests naming localhost or an IP address of this server as their Host are served (421 for any other name); set " +
		EnvName("server.allowed_hosts") + " to the names clients use"
}
