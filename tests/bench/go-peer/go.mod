// The Go peer of scripts/bench (tests/bench/go-peer/README.md). Built offline: the one
// dependency is Debian's golang-github-go-sql-driver-mysql-dev, taken from its source tree.
module connector/bench/go-peer

go 1.19

require github.com/go-sql-driver/mysql v1.5.0

replace github.com/go-sql-driver/mysql => /usr/share/gocode/src/github.com/go-sql-driver/mysql
