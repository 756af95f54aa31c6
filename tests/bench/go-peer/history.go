// GET /v1/history and GET /v1/history/hash: validation (as the Node peer's lib/history.mjs),
// the reads (as the project's src/db/history_reads.cpp) and the record's JSON shape.
package main

import (
	"database/sql"
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var historyParams = []string{"page_id", "page_size", "source_deposit_address", "source_sender",
	"source_blockchain", "source_asset_id", "source_tx_hash", "destination_address",
	"destination_blockchain", "destination_asset_id", "destination_tx_hash", "pair_id", "status",
	"order"}
var hashParams = []string{"hash"}

var statuses = []string{"Deposit", "Pending", "Confirmed", "Error"} // history.status's ENUM order

const defaultPageSize = 20
const maxPageSize = 100

var (
	digits    = regexp.MustCompile(`^[0-9]+$`)
	hex40     = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)
	hex64     = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
	errNoSuch = errors.New("a history record names unknown reference data")
)

// --- validation ----------------------------------------------------------------------------

func parseUint64(name, value string) (uint64, error) {
	if !digits.MatchString(value) {
		return 0, invalidParameter(name, name+" must be an unsigned decimal integer")
	}
	n, err := strconv.ParseUint(value, 10, 64)
	if err != nil {
		return 0, invalidParameter(name, name+" is too large (the maximum is 18446744073709551615)")
	}
	return n, nil
}

func parseFilter(f *filterSpec, value string, ref *reference) (any, error) {
	switch f.kind {
	case kindAddress:
		if len(value) == 42 && strings.HasPrefix(value, "0x") && hex40.MatchString(value[2:]) {
			return strings.ToLower(value), nil
		}
		return nil, invalidParameter(f.param, f.param+" must be 0x followed by 40 hex digits")
	case kindTxHash:
		if len(value) == 66 && strings.HasPrefix(value, "0x") && hex64.MatchString(value[2:]) {
			return strings.ToLower(value), nil
		}
		return nil, invalidParameter(f.param, f.param+" must be 0x followed by 64 hex digits")
	case kindChain:
		if c, ok := ref.chainBySlug[value]; ok {
			return c.id, nil
		}
		return nil, invalidParameter(f.param, f.param+" must be the slug of a chain of this service: "+
			ref.slugList)
	case kindID:
		return parseUint64(f.param, value)
	}
	lower := strings.ToLower(value)
	for _, s := range statuses {
		if strings.ToLower(s) == lower {
			return s, nil
		}
	}
	return nil, invalidParameter(f.param, f.param+" must be one of Deposit, Pending, Confirmed, Error")
}

type historyQuery struct {
	pageID, pageSize uint64
	ascending        bool
	values           filterValues
}

func parseHistoryQuery(params map[string]string, ref *reference) (*historyQuery, error) {
	q := &historyQuery{pageSize: defaultPageSize}
	var err error
	if v, ok := params["page_id"]; ok {
		if q.pageID, err = parseUint64("page_id", v); err != nil {
			return nil, err
		}
	}
	if v, ok := params["page_size"]; ok {
		size, err := parseUint64("page_size", v)
		if err != nil {
			return nil, err
		}
		if size > maxPageSize {
			size = maxPageSize
		}
		if size != 0 {
			q.pageSize = size
		}
	}
	if v, ok := params["order"]; ok {
		switch strings.ToUpper(v) {
		case "ASC":
			q.ascending = true
		case "DESC":
		default:
			return nil, invalidParameter("order", "order must be ASC or DESC")
		}
	}
	for i := range historyFilters {
		f := &historyFilters[i]
		if v, ok := params[f.param]; ok {
			if q.values[i], err = parseFilter(f, v, ref); err != nil {
				return nil, err
			}
		}
	}
	return q, nil
}

// --- the reads -----------------------------------------------------------------------------

// A history row as read (a record's columns in recordColumns' order).
type historyRow struct {
	id, pairID, sourceChain, destinationChain, sourceAssetID, destinationAssetID uint64
	hash, sourceDepositAddress, sourceSender, destinationAddress, sourceTxHash   string
	sourceBlockNumber, sourceBlockTimestamp, sourceAmount                        string
	destinationBlockNumber, destinationBlockTimestamp, destinationTxHash         sql.NullString
	destinationAmount, fee, statusMessage                                        sql.NullString
	status                                                                       int64
}

func (r *historyRow) targets() []any {
	return []any{&r.id, &r.hash, &r.pairID, &r.sourceChain, &r.destinationChain,
		&r.sourceDepositAddress, &r.sourceSender, &r.destinationAddress, &r.sourceBlockNumber,
		&r.destinationBlockNumber, &r.sourceBlockTimestamp, &r.destinationBlockTimestamp,
		&r.sourceTxHash, &r.destinationTxHash, &r.sourceAssetID, &r.destinationAssetID,
		&r.sourceAmount, &r.destinationAmount, &r.fee, &r.status, &r.statusMessage}
}

// A database failure: the answer is a 503.
type dbError struct{ err error }

func (e dbError) Error() string { return e.err.Error() }

func run(tx *sql.Tx, s *statement, v *filterValues, extra ...any) (*sql.Rows, error) {
	args := make([]any, 0, len(s.binds)+len(extra))
	for _, f := range s.binds {
		args = append(args, v[f])
	}
	args = append(args, extra...)
	stmt := s.stmt
	if tx != nil {
		stmt = tx.Stmt(stmt)
	}
	rows, err := stmt.Query(args...)
	if err != nil {
		return nil, dbError{err}
	}
	return rows, nil
}

func count(tx *sql.Tx, ps *pathStatements, v *filterValues) (uint64, error) {
	rows, err := run(tx, &ps.count, v)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var total uint64
	if rows.Next() {
		if err := rows.Scan(&total); err != nil {
			return 0, dbError{err}
		}
	}
	if err := rows.Err(); err != nil {
		return 0, dbError{err}
	}
	return total, nil
}

// A page's rows in the order shown (ascending or not), and the list's total when the statement
// carried it (the direct form, when the page has a row to carry it on).
func page(tx *sql.Tx, ps *pathStatements, v *filterValues, w pageWalk, shownAscending bool) (
	[]historyRow, *uint64, error) {
	form := formDeferred
	if w.offset < deferredJoinFromOffset {
		form = formDirect
	}
	a := 0
	if w.ascending {
		a = 1
	}
	rows, err := run(tx, &ps.page[a][form], v, w.limit, w.offset)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	records := make([]historyRow, 0, w.limit)
	var carried uint64
	for rows.Next() {
		records = append(records, historyRow{})
		targets := records[len(records)-1].targets()
		if form == formDirect {
			targets = append(targets, &carried)
		}
		if err := rows.Scan(targets...); err != nil {
			return nil, nil, dbError{err}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, dbError{err}
	}
	var total *uint64
	if form == formDirect && len(records) > 0 {
		total = &carried
	}
	if form != formDirect || w.ascending != shownAscending {
		sort.Slice(records, func(i, j int) bool {
			return (records[i].id < records[j].id) == shownAscending
		})
	}
	return records, total, nil
}

// Near the start of a list, whole rows in index order; deeper down the deferred join.
const deferredJoinFromOffset = 100

// The project's find_history_page: near the start the page comes with its total (one round
// trip); else the total, then the page, walked from the cheaper end (in one snapshot when
// counted from the other end).
func findHistoryPage(db *sql.DB, q *historyQuery) ([]historyRow, uint64, error) {
	p := chooseAccessPath(&q.values)
	r := 0
	if hasResiduals(&accessPaths[p], &q.values) {
		r = 1
	}
	ps := &statements[p][r]
	if q.pageID < deferredJoinFromOffset && q.pageID*q.pageSize < deferredJoinFromOffset {
		records, total, err := page(nil, ps, &q.values,
			pageWalk{q.ascending, q.pageID * q.pageSize, q.pageSize, false}, q.ascending)
		if err != nil || total != nil {
			return records, deref(total), err
		}
	}
	total, err := count(nil, ps, &q.values)
	if err != nil || q.pageID >= (total+q.pageSize-1)/q.pageSize {
		return nil, total, err
	}
	offset := q.pageID * q.pageSize
	if w := cheapestWalk(total, offset, q.pageSize, q.ascending); !w.reversed {
		records, _, err := page(nil, ps, &q.values, w, q.ascending)
		return records, total, err
	}
	tx, err := db.Begin()
	if err != nil {
		return nil, 0, dbError{err}
	}
	defer tx.Rollback() // a no-op after Commit
	var records []historyRow
	if total, err = count(tx, ps, &q.values); err == nil && offset < total {
		records, _, err = page(tx, ps, &q.values, cheapestWalk(total, offset, q.pageSize, q.ascending),
			q.ascending)
	}
	if err == nil {
		if err = tx.Commit(); err != nil {
			err = dbError{err}
		}
	}
	return records, total, err
}

func deref(n *uint64) uint64 {
	if n == nil {
		return 0
	}
	return *n
}

// --- rendering -----------------------------------------------------------------------------

var statusMessages = map[string]string{
	"Deposit":   "The deposit was seen on the source chain and awaits confirmation.",
	"Pending":   "The deposit is confirmed and the payout on the destination chain is under way.",
	"Confirmed": "The transfer is complete: the payout is confirmed on the destination chain.",
	"Error":     "The transfer could not be completed; contact support with this record's hash.",
}

// A record on the wire, in the contract's member order.
type recordJSON struct {
	ID                        string `json:"id"`
	Hash                      string `json:"hash"`
	PairID                    uint64 `json:"pair_id"`
	SourceSlug                string `json:"source_slug"`
	SourceNetwork             string `json:"source_network"`
	SourceChainID             string `json:"source_chain_id"`
	SourceBaseChain           string `json:"source_base_chain"`
	DestinationSlug           string `json:"destination_slug"`
	DestinationNetwork        string `json:"destination_network"`
	DestinationChainID        string `json:"destination_chain_id"`
	DestinationBaseChain      string `json:"destination_base_chain"`
	SourceDepositAddress      string `json:"source_deposit_address"`
	SourceSender              string `json:"source_sender"`
	DestinationAddress        string `json:"destination_address"`
	SourceBlockNumber         string `json:"source_block_number"`
	DestinationBlockNumber    string `json:"destination_block_number"`
	SourceBlockTimestamp      string `json:"source_block_timestamp"`
	DestinationBlockTimestamp string `json:"destination_block_timestamp"`
	SourceTxHash              string `json:"source_tx_hash"`
	DestinationTxHash         string `json:"destination_tx_hash"`
	SourceAssetID             string `json:"source_asset_id"`
	DestinationAssetID        string `json:"destination_asset_id"`
	SourceAssetAddress        string `json:"source_asset_address"`
	DestinationAssetAddress   string `json:"destination_asset_address"`
	SourceAssetName           string `json:"source_asset_name"`
	DestinationAssetName      string `json:"destination_asset_name"`
	SourceAssetSymbol         string `json:"source_asset_symbol"`
	DestinationAssetSymbol    string `json:"destination_asset_symbol"`
	SourceAssetDecimals       int    `json:"source_asset_decimals"`
	DestinationAssetDecimals  int    `json:"destination_asset_decimals"`
	SourceAssetType           string `json:"source_asset_type"`
	DestinationAssetType      string `json:"destination_asset_type"`
	SourceAmount              string `json:"source_amount"`
	DestinationAmount         string `json:"destination_amount"`
	Fee                       string `json:"fee"`
	Status                    string `json:"status"`
	StatusMessage             string `json:"status_message,omitempty"` // by hash only
}

func statusName(index int64) string {
	if index >= 1 && int(index) <= len(statuses) {
		return statuses[index-1]
	}
	return ""
}

func record(row *historyRow, ref *reference, withStatusMessage bool) recordJSON {
	sc, dc := ref.chainByID[row.sourceChain], ref.chainByID[row.destinationChain]
	sa, da := ref.assetByID[row.sourceAssetID], ref.assetByID[row.destinationAssetID]
	status := statusName(row.status)
	r := recordJSON{
		ID:                        strconv.FormatUint(row.id, 10),
		Hash:                      row.hash,
		PairID:                    row.pairID,
		SourceSlug:                sc.slug,
		SourceNetwork:             sc.network,
		SourceChainID:             sc.chainID,
		SourceBaseChain:           sc.baseChain,
		DestinationSlug:           dc.slug,
		DestinationNetwork:        dc.network,
		DestinationChainID:        dc.chainID,
		DestinationBaseChain:      dc.baseChain,
		SourceDepositAddress:      row.sourceDepositAddress,
		SourceSender:              row.sourceSender,
		DestinationAddress:        row.destinationAddress,
		SourceBlockNumber:         row.sourceBlockNumber,
		DestinationBlockNumber:    row.destinationBlockNumber.String,
		SourceBlockTimestamp:      row.sourceBlockTimestamp,
		DestinationBlockTimestamp: row.destinationBlockTimestamp.String,
		SourceTxHash:              row.sourceTxHash,
		DestinationTxHash:         row.destinationTxHash.String,
		SourceAssetID:             strconv.FormatUint(sa.id, 10),
		DestinationAssetID:        strconv.FormatUint(da.id, 10),
		SourceAssetAddress:        sa.address,
		DestinationAssetAddress:   da.address,
		SourceAssetName:           sa.name,
		DestinationAssetName:      da.name,
		SourceAssetSymbol:         sa.symbol,
		DestinationAssetSymbol:    da.symbol,
		SourceAssetDecimals:       sa.decimals,
		DestinationAssetDecimals:  da.decimals,
		SourceAssetType:           sa.assetType,
		DestinationAssetType:      da.assetType,
		// The fee is charged in the source asset.
		SourceAmount:      formatUnits(row.sourceAmount, true, sa.decimals),
		DestinationAmount: formatUnits(row.destinationAmount.String, row.destinationAmount.Valid, da.decimals),
		Fee:               formatUnits(row.fee.String, row.fee.Valid, sa.decimals),
		Status:            status,
	}
	if withStatusMessage {
		r.StatusMessage = row.statusMessage.String
		if r.StatusMessage == "" {
			r.StatusMessage = statusMessages[status]
		}
	}
	return r
}

// The answer of /v1/history: the page, then the filters echoed (as sent; the status
// canonical).
type historyJSON struct {
	PageID                string       `json:"page_id"`
	PageSize              string       `json:"page_size"`
	TotalPage             string       `json:"total_page"`
	TotalHistory          string       `json:"total_history"`
	List                  []recordJSON `json:"list"`
	SourceDepositAddress  string       `json:"source_deposit_address"`
	SourceSender          string       `json:"source_sender"`
	SourceBlockchain      string       `json:"source_blockchain"`
	SourceAssetID         string       `json:"source_asset_id"`
	DestinationAddress    string       `json:"destination_address"`
	DestinationBlockchain string       `json:"destination_blockchain"`
	DestinationAssetID    string       `json:"destination_asset_id"`
	PairID                string       `json:"pairId"`
	Status                string       `json:"status"`
}

// --- the endpoints -------------------------------------------------------------------------

func (s *server) history(params map[string]string) (*historyJSON, error) {
	ref := s.ref.Load()
	q, err := parseHistoryQuery(params, ref)
	if err != nil {
		return nil, err
	}
	rows, total, err := findHistoryPage(s.db, q)
	if err != nil {
		return nil, err
	}
	if ref, err = s.covering(ref, rows); err != nil {
		return nil, err
	}
	answer := &historyJSON{
		PageID:                strconv.FormatUint(q.pageID, 10),
		PageSize:              strconv.FormatUint(q.pageSize, 10),
		TotalPage:             strconv.FormatUint((total+q.pageSize-1)/q.pageSize, 10),
		TotalHistory:          strconv.FormatUint(total, 10),
		List:                  make([]recordJSON, len(rows)),
		SourceDepositAddress:  params["source_deposit_address"],
		SourceSender:          params["source_sender"],
		SourceBlockchain:      params["source_blockchain"],
		SourceAssetID:         params["source_asset_id"],
		DestinationAddress:    params["destination_address"],
		DestinationBlockchain: params["destination_blockchain"],
		DestinationAssetID:    params["destination_asset_id"],
		PairID:                params["pair_id"],
	}
	if status, ok := q.values[statusFilter].(string); ok {
		answer.Status = status
	}
	for i := range rows {
		answer.List[i] = record(&rows[i], ref, false)
	}
	return answer, nil
}

func (s *server) historyByHash(params map[string]string) (*recordJSON, error) {
	hash, ok := params["hash"]
	if !ok {
		return nil, &apiError{400, "missing_parameter", "hash is required", "hash"}
	}
	if strings.HasPrefix(hash, "0x") || strings.HasPrefix(hash, "0X") {
		hash = hash[2:]
	}
	if !hex64.MatchString(hash) {
		return nil, invalidParameter("hash", "hash must be 64 hex digits, with or without 0x")
	}
	rows, err := byHash.Query(strings.ToLower(hash))
	if err != nil {
		return nil, dbError{err}
	}
	defer rows.Close()
	var row historyRow
	found := rows.Next()
	if found {
		err = rows.Scan(row.targets()...)
	}
	if err == nil {
		err = rows.Err()
	}
	if err != nil {
		return nil, dbError{err}
	}
	if !found {
		return nil, &apiError{404, "not_found", "No history record has this hash", "hash"}
	}
	ref, err := s.covering(s.ref.Load(), []historyRow{row})
	if err != nil {
		return nil, err
	}
	r := record(&row, ref, true)
	return &r, nil
}
