// The history statements, exactly as the project runs them: a port of
// src/db/history_filters.h, src/db/history_statements.cpp and src/db/page_walk.cpp. Whatever
// filters a request combines, a page is read through one of a few access paths, each a forced
// index: the most selective filter set drives the index range and every other filter is a
// bound residual condition `(? IS NULL OR column = ?)`. So the SQL text depends only on the
// path, the order, the page form and whether residuals are present: the whole set is prepared
// once at start (prepareStatements) and reused.
package main

import (
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

type filterKind int

const (
	kindAddress filterKind = iota // 0x and 40 hex digits, bound in lower case
	kindChain                     // a chain's slug, bound as its chains.id
	kindID                        // an unsigned 64-bit id
	kindTxHash                    // 0x and 64 hex digits, bound in lower case
	kindStatus                    // a status, bound as its name
)

// One filter of /v1/history: its parameter, its history column, the answer member that echoes
// it ("" when none) and, ranked by selectivity (lowest first), the index it drives a read by
// and the (column, status) index taken instead when the status is set too.
type filterSpec struct {
	param       string
	kind        filterKind
	echo        string
	column      string
	rank        int
	index       string
	statusIndex string
}

// In the order the endpoint checks and echoes them and the statements bind them (the
// project's kHistoryFilters).
var historyFilters = []filterSpec{
	{"source_deposit_address", kindAddress, "source_deposit_address", "source_deposit_address", 30,
		"ix_history_source_deposit_address", "ix_history_source_deposit_address_status"},
	{"source_sender", kindAddress, "source_sender", "source_sender", 50,
		"ix_history_source_sender", "ix_history_source_sender_status"},
	{"source_blockchain", kindChain, "source_blockchain", "source_chain", 90,
		"ix_history_source_chain", "ix_history_source_chain_status"},
	{"source_asset_id", kindID, "source_asset_id", "source_asset_id", 70, "ix_history_source_asset", ""},
	{"source_tx_hash", kindTxHash, "", "source_tx_hash", 10, "ix_history_source_tx_hash", ""},
	{"destination_address", kindAddress, "destination_address", "destination_address", 40,
		"ix_history_destination_address", "ix_history_destination_address_status"},
	{"destination_blockchain", kindChain, "destination_blockchain", "destination_chain", 100,
		"ix_history_destination_chain", "ix_history_destination_chain_status"},
	{"destination_asset_id", kindID, "destination_asset_id", "destination_asset_id", 80,
		"ix_history_destination_asset", ""},
	{"destination_tx_hash", kindTxHash, "", "destination_tx_hash", 20, "ix_history_destination_tx_hash", ""},
	{"pair_id", kindID, "pairId", "pair_id", 60, "ix_history_pair", "ix_history_pair_status"},
	{"status", kindStatus, "status", "status", 110, "ix_history_status", ""},
}

const statusFilter = 10 // historyFilters' status row
const noFilter = -1     // the unfiltered list's path

// A request's filter values in historyFilters' order, as bound; nil when unused.
type filterValues [11]any

// history_counts' dimensions and history_address_counts' address columns.
var countedColumns = []string{"status", "pair_id", "source_chain", "destination_chain",
	"source_asset_id", "destination_asset_id"}
var countedAddressColumns = []string{"source_deposit_address", "source_sender", "destination_address"}

type totalSource int

const (
	totalCounters        totalSource = iota // a sum of history_counts rows
	totalAddressCounters                    // one address (and status): history_address_counts
	totalIndex                              // COUNT(*) over the index range
)

type accessPath struct {
	index      string
	column     string
	withStatus bool
	total      totalSource
	filter     int
}

func listed(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func counted(filter int) bool { return listed(countedColumns, historyFilters[filter].column) }

func totalOf(column string) totalSource {
	switch {
	case column == "" || listed(countedColumns, column):
		return totalCounters
	case listed(countedAddressColumns, column):
		return totalAddressCounters
	}
	return totalIndex
}

// The access paths by rank, a (column, status) index before its plain one; the unfiltered
// list last.
var accessPaths = func() []accessPath {
	driving := []int{}
	for i, f := range historyFilters {
		if f.rank != 0 {
			driving = append(driving, i)
		}
	}
	sort.Slice(driving, func(a, b int) bool {
		return historyFilters[driving[a]].rank < historyFilters[driving[b]].rank
	})
	paths := []accessPath{}
	for _, i := range driving {
		f := historyFilters[i]
		if f.statusIndex != "" {
			paths = append(paths, accessPath{f.statusIndex, f.column, true, totalOf(f.column), i})
		}
		paths = append(paths, accessPath{f.index, f.column, false, totalOf(f.column), i})
	}
	return append(paths, accessPath{"PRIMARY", "", false, totalCounters, noFilter})
}()

func (p *accessPath) drives(filter int) bool {
	return filter == p.filter || (p.withStatus && filter == statusFilter)
}

// The first path whose driving filters are all set.
func chooseAccessPath(v *filterValues) int {
	for i := range accessPaths {
		p := &accessPaths[i]
		if p.filter == noFilter {
			return i
		}
		if v[p.filter] != nil && (!p.withStatus || v[statusFilter] != nil) {
			return i
		}
	}
	return len(accessPaths) - 1
}

// True when a filter is set that the path does not drive.
func hasResiduals(p *accessPath, v *filterValues) bool {
	for i := range historyFilters {
		if !p.drives(i) && v[i] != nil {
			return true
		}
	}
	return false
}

type conditions int

const (
	condCounters conditions = iota
	condDriving
	condDrivingAndResiduals
)

func indexConditions(residuals bool) conditions {
	if residuals {
		return condDrivingAndResiduals
	}
	return condDriving
}

// A statement's text and the filters its placeholders bind, in order (a page statement's
// LIMIT and OFFSET come after them).
type statement struct {
	sql   string
	binds []int
	stmt  *sql.Stmt
}

// " WHERE a = ? AND status = ? AND (? IS NULL OR b = ?) AND ...": the driving columns, then
// (with residuals) every other filter column; or the counters' dimensions, all residual.
func whereClause(p *accessPath, which conditions) (string, []int) {
	var b strings.Builder
	binds := []int{}
	add := func(condition string) {
		if b.Len() == 0 {
			b.WriteString(" WHERE ")
		} else {
			b.WriteString(" AND ")
		}
		b.WriteString(condition)
	}
	counters := which == condCounters
	for i, f := range historyFilters {
		if counters || !p.drives(i) {
			continue
		}
		add(f.column + " = ?")
		binds = append(binds, i)
	}
	if which == condDriving {
		return b.String(), binds
	}
	for i, f := range historyFilters {
		if (counters && !counted(i)) || (!counters && p.drives(i)) {
			continue
		}
		add("(? IS NULL OR " + f.column + " = ?)")
		binds = append(binds, i, i)
	}
	return b.String(), binds
}

func forced(index string) string { return " FORCE INDEX (" + index + ")" }

func orderBy(ascending bool, id string) string {
	if ascending {
		return " ORDER BY " + id + " ASC LIMIT ? OFFSET ?"
	}
	return " ORDER BY " + id + " DESC LIMIT ? OFFSET ?"
}

// Every column of a record; chains and assets come from the reference data when rendering.
const recordColumns = "h.id, h.hash, h.pair_id, h.source_chain, h.destination_chain, " +
	"h.source_deposit_address, h.source_sender, h.destination_address, h.source_block_number, " +
	"h.destination_block_number, h.source_block_timestamp, h.destination_block_timestamp, " +
	"h.source_tx_hash, h.destination_tx_hash, h.source_asset_id, h.destination_asset_id, " +
	"h.source_amount, h.destination_amount, h.fee, h.status + 0, h.status_message"

const byHashSQL = "SELECT " + recordColumns + " FROM history h WHERE h.hash = ?"

func countOf(p *accessPath, residuals bool) statement {
	switch {
	case p.total == totalCounters:
		where, binds := whereClause(p, condCounters)
		return statement{sql: "SELECT COALESCE(SUM(records), 0) FROM history_counts" + where, binds: binds}
	case p.total == totalAddressCounters && !residuals:
		_, binds := whereClause(p, condDriving) // the address, then the status
		s := "SELECT COALESCE(SUM(records), 0) FROM history_address_counts WHERE address_column = '" +
			p.column + "' AND address = ?"
		if p.withStatus {
			s += " AND status = ?"
		}
		return statement{sql: s, binds: binds}
	}
	where, binds := whereClause(p, indexConditions(residuals))
	return statement{sql: "SELECT COUNT(*) FROM history" + forced(p.index) + where, binds: binds}
}

// A page is read directly near the start of a list, with the list's total as one more column,
// and through a deferred join deeper down (its ids from the index alone, then those rows).
const (
	formDirect   = 0
	formDeferred = 1
)

func pageOf(p *accessPath, ascending bool, form int, residuals bool) statement {
	where, binds := whereClause(p, indexConditions(residuals))
	if form == formDirect {
		total := countOf(p, residuals)
		return statement{
			sql: "SELECT " + recordColumns + ", (" + total.sql + ") FROM history h" + forced(p.index) +
				where + orderBy(ascending, "h.id"),
			binds: append(total.binds, binds...),
		}
	}
	index := p.index
	if p.column == "" {
		index = "ix_history_id" // the narrowest index in id order
	}
	return statement{
		sql: "SELECT STRAIGHT_JOIN " + recordColumns + " FROM (SELECT id FROM history" + forced(index) +
			where + orderBy(ascending, "id") + ") p JOIN history h" + forced("PRIMARY") + " ON h.id = p.id",
		binds: binds,
	}
}

// A path's statements, with and without residuals: the count, and the pages by
// [ascending][form].
type pathStatements struct {
	count statement
	page  [2][2]statement
}

// statements[path][residuals]; byHash: the one record by hash.
var statements [][2]pathStatements
var byHash *sql.Stmt

// Prepares every statement text once (database/sql then prepares each on a connection the
// first time it runs there, and keeps it).
func prepareStatements(db *sql.DB) error {
	prepared := map[string]*sql.Stmt{}
	prepare := func(s *statement) error {
		if stmt, ok := prepared[s.sql]; ok {
			s.stmt = stmt
			return nil
		}
		stmt, err := db.Prepare(s.sql)
		if err != nil {
			return fmt.Errorf("preparing %s: %w", s.sql, err)
		}
		prepared[s.sql], s.stmt = stmt, stmt
		return nil
	}
	statements = make([][2]pathStatements, len(accessPaths))
	for i := range accessPaths {
		for r, residuals := range []bool{false, true} {
			ps := &statements[i][r]
			ps.count = countOf(&accessPaths[i], residuals)
			if err := prepare(&ps.count); err != nil {
				return err
			}
			for a, ascending := range []bool{false, true} {
				for _, form := range []int{formDirect, formDeferred} {
					ps.page[a][form] = pageOf(&accessPaths[i], ascending, form, residuals)
					if err := prepare(&ps.page[a][form]); err != nil {
						return err
					}
				}
			}
		}
	}
	var err error
	byHash, err = db.Prepare(byHashSQL)
	return err
}

// The cheaper way to the page at offset of total records: the DESC page at offset o is the
// ASC page at offset total - o - rows read backwards, and a backward walk costs about double.
// Offsets under 10,000 are always walked as asked.
type pageWalk struct {
	ascending bool
	offset    uint64
	limit     uint64
	reversed  bool
}

const reverseWalkFromOffset = 10000

func cheapestWalk(total, offset, limit uint64, ascending bool) pageWalk {
	asked := pageWalk{ascending, offset, limit, false}
	if offset < reverseWalkFromOffset || offset >= total {
		return asked
	}
	rows := limit
	if total-offset < rows {
		rows = total - offset
	}
	other := total - offset - rows
	cost, otherCost := 2*offset, other
	if ascending {
		cost, otherCost = offset, 2*other
	}
	if otherCost >= cost {
		return asked
	}
	return pageWalk{!ascending, other, rows, true}
}
