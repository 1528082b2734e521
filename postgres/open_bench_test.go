package postgres

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/imprint-dev/imprint/internal/pgtest"
)

// BenchmarkOpenFresh times Open into a fresh schema of the test database:
// connecting and creating imprint's schema, what the first import into a
// database waits for before its first write. halves is the default pool
// (the first migration's two halves at once); one-connection is a pool of
// one, where they run one after the other: the baseline, in the same run.
// The schemas are left to the cluster's teardown (pgtest.KeptSchema).
func BenchmarkOpenFresh(b *testing.B) {
	for _, c := range []struct{ name, pool string }{{"halves", ""}, {"one-connection", "1"}} {
		b.Run(c.name, func(b *testing.B) {
			var spent time.Duration
			for b.Loop() {
				b.StopTimer()
				u := pgtest.KeptSchema(b)
				if c.pool != "" {
					p, err := url.Parse(u)
					if err != nil {
						b.Fatal(err)
					}
					q := p.Query()
					q.Set("pool_max_conns", c.pool)
					p.RawQuery = q.Encode()
					u = p.String()
				}
				b.StartTimer()
				start := time.Now()
				db, err := Open(context.Background(), u)
				spent += time.Since(start)
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(spent.Microseconds())/1000/float64(b.N), "ms/open")
		})
	}
}
