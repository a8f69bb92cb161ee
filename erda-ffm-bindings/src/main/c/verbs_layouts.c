/*
 * verbs_layouts.c - the single source of truth for every struct size, field offset and
 * enum/#define value that erda-ffm-bindings uses from <infiniband/verbs.h>, <rdma/rdma_cma.h>
 * and <netinet/in.h>. jextract is not available to this build, so this program plays its role:
 *
 *   verbs_layouts --check         prints "size NAME N", "offset NAME.path N", "const NAME V"
 *                                 (read by LayoutConformanceTest, which compares them with the
 *                                 committed Java bindings)
 *   verbs_layouts --java Verbs    prints io/erda/ffm/verbs/Verbs.java   (layouts of verbs.h)
 *   verbs_layouts --java RdmaCma  prints io/erda/ffm/rdmacm/RdmaCma.java (rdma_cma.h, in.h)
 *
 * Regenerate with scripts/gen-verbs-layouts.sh. Compile flags: -DERDA_HAVE_WR_FLUSH=1 when the
 * installed verbs.h declares ibv_qp_ex.wr_flush (rdma-core >= v45); the enum values of FLUSH
 * cannot be probed with #ifdef, so the script and the test both derive the flag from the header.
 *
 * Only the fields Erda reads or writes are described; the rest of every struct is padding in the
 * Java layout, but sizes are always the full sizeof, so arrays of structs stay correct.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#ifndef ERDA_HAVE_WR_FLUSH
#define ERDA_HAVE_WR_FLUSH 0
#endif

/* Field kinds: B u8, S u16, I u32/int/enum, J u64/size_t, A pointer, X byte array, N nested. */
struct agg;
struct field {
    const char *name;
    size_t offset;
    size_t size;
    char kind;
    const struct agg *nested;
};
struct agg {
    const char *cname;   /* C name, also the layout's withName() */
    int is_union;
    size_t size;
    size_t align;
    const struct field *fields;
    size_t nfields;
    int top;             /* 1: emitted as its own constant with VarHandles */
};

#define SZ(T, m) sizeof(((T *)0)->m)
#define AL(T) _Alignof(T)
#define F(T, m, k) { #m, offsetof(T, m), SZ(T, m), k, NULL }
#define FN(T, m, name, k) { name, offsetof(T, m), SZ(T, m), k, NULL }
#define NEST(T, m, a) { #m, offsetof(T, m), SZ(T, m), 'N', &a }
#define AGG(T, cname, u, fs, top) { cname, u, sizeof(T), AL(T), fs, sizeof(fs) / sizeof(fs[0]), top }

/* ---------------------------------------------------------------- verbs.h */
static const struct field f_sge[] = { F(struct ibv_sge, addr, 'J'), F(struct ibv_sge, length, 'I'), F(struct ibv_sge, lkey, 'I') };
static const struct agg a_sge = AGG(struct ibv_sge, "ibv_sge", 0, f_sge, 1);

static const struct field f_device[] = { F(struct ibv_device, node_type, 'I'), F(struct ibv_device, transport_type, 'I'), F(struct ibv_device, name, 'X') };
static const struct agg a_device = AGG(struct ibv_device, "ibv_device", 0, f_device, 1);

typedef struct ibv_context_ops ctx_ops_t;
static const struct field f_ops[] = {
    F(ctx_ops_t, poll_cq, 'A'), F(ctx_ops_t, req_notify_cq, 'A'), F(ctx_ops_t, post_srq_recv, 'A'),
    F(ctx_ops_t, post_send, 'A'), F(ctx_ops_t, post_recv, 'A') };
static const struct agg a_ops = AGG(ctx_ops_t, "ibv_context_ops", 0, f_ops, 0);

static const struct field f_context[] = {
    F(struct ibv_context, device, 'A'), NEST(struct ibv_context, ops, a_ops), F(struct ibv_context, cmd_fd, 'I'),
    F(struct ibv_context, async_fd, 'I'), F(struct ibv_context, num_comp_vectors, 'I'), F(struct ibv_context, abi_compat, 'A') };
static const struct agg a_context = AGG(struct ibv_context, "ibv_context", 0, f_context, 1);

/* verbs_context sits immediately before (and ends with) ibv_context; ibv_create_qp_ex is an inline
 * reading create_qp_ex from it, so the provider needs these offsets relative to "context". */
static const struct field f_vctx[] = {
    F(struct verbs_context, query_device_ex, 'A'), F(struct verbs_context, create_qp_ex, 'A'), F(struct verbs_context, sz, 'J'),
    NEST(struct verbs_context, context, a_context) };
static const struct agg a_vctx = AGG(struct verbs_context, "verbs_context", 0, f_vctx, 1);

static const struct field f_comp_channel[] = { F(struct ibv_comp_channel, context, 'A'), F(struct ibv_comp_channel, fd, 'I'), F(struct ibv_comp_channel, refcnt, 'I') };
static const struct agg a_comp_channel = AGG(struct ibv_comp_channel, "ibv_comp_channel", 0, f_comp_channel, 1);

static const struct field f_pd[] = { F(struct ibv_pd, context, 'A'), F(struct ibv_pd, handle, 'I') };
static const struct agg a_pd = AGG(struct ibv_pd, "ibv_pd", 0, f_pd, 1);

static const struct field f_mr[] = {
    F(struct ibv_mr, context, 'A'), F(struct ibv_mr, pd, 'A'), F(struct ibv_mr, addr, 'A'), F(struct ibv_mr, length, 'J'),
    F(struct ibv_mr, handle, 'I'), F(struct ibv_mr, lkey, 'I'), F(struct ibv_mr, rkey, 'I') };
static const struct agg a_mr = AGG(struct ibv_mr, "ibv_mr", 0, f_mr, 1);

static const struct field f_cq[] = {
    F(struct ibv_cq, context, 'A'), F(struct ibv_cq, channel, 'A'), F(struct ibv_cq, cq_context, 'A'),
    F(struct ibv_cq, handle, 'I'), F(struct ibv_cq, cqe, 'I') };
static const struct agg a_cq = AGG(struct ibv_cq, "ibv_cq", 0, f_cq, 1);

static const struct field f_qp[] = {
    F(struct ibv_qp, context, 'A'), F(struct ibv_qp, qp_context, 'A'), F(struct ibv_qp, pd, 'A'), F(struct ibv_qp, send_cq, 'A'),
    F(struct ibv_qp, recv_cq, 'A'), F(struct ibv_qp, srq, 'A'), F(struct ibv_qp, handle, 'I'), F(struct ibv_qp, qp_num, 'I'),
    F(struct ibv_qp, state, 'I'), F(struct ibv_qp, qp_type, 'I') };
static const struct agg a_qp = AGG(struct ibv_qp, "ibv_qp", 0, f_qp, 1);

static const struct field f_qp_cap[] = {
    F(struct ibv_qp_cap, max_send_wr, 'I'), F(struct ibv_qp_cap, max_recv_wr, 'I'), F(struct ibv_qp_cap, max_send_sge, 'I'),
    F(struct ibv_qp_cap, max_recv_sge, 'I'), F(struct ibv_qp_cap, max_inline_data, 'I') };
static const struct agg a_qp_cap = AGG(struct ibv_qp_cap, "ibv_qp_cap", 0, f_qp_cap, 1);

static const struct field f_qp_init_attr[] = {
    F(struct ibv_qp_init_attr, qp_context, 'A'), F(struct ibv_qp_init_attr, send_cq, 'A'), F(struct ibv_qp_init_attr, recv_cq, 'A'),
    F(struct ibv_qp_init_attr, srq, 'A'), NEST(struct ibv_qp_init_attr, cap, a_qp_cap), F(struct ibv_qp_init_attr, qp_type, 'I'),
    F(struct ibv_qp_init_attr, sq_sig_all, 'I') };
static const struct agg a_qp_init_attr = AGG(struct ibv_qp_init_attr, "ibv_qp_init_attr", 0, f_qp_init_attr, 1);

static const struct field f_qp_init_attr_ex[] = {
    F(struct ibv_qp_init_attr_ex, qp_context, 'A'), F(struct ibv_qp_init_attr_ex, send_cq, 'A'), F(struct ibv_qp_init_attr_ex, recv_cq, 'A'),
    F(struct ibv_qp_init_attr_ex, srq, 'A'), NEST(struct ibv_qp_init_attr_ex, cap, a_qp_cap), F(struct ibv_qp_init_attr_ex, qp_type, 'I'),
    F(struct ibv_qp_init_attr_ex, sq_sig_all, 'I'), F(struct ibv_qp_init_attr_ex, comp_mask, 'I'), F(struct ibv_qp_init_attr_ex, pd, 'A'),
    F(struct ibv_qp_init_attr_ex, send_ops_flags, 'J') };
static const struct agg a_qp_init_attr_ex = AGG(struct ibv_qp_init_attr_ex, "ibv_qp_init_attr_ex", 0, f_qp_init_attr_ex, 1);

static const struct field f_gid[] = { F(union ibv_gid, raw, 'X') };
static const struct agg a_gid = AGG(union ibv_gid, "ibv_gid", 0, f_gid, 1);

static const struct field f_grh[] = {
    NEST(struct ibv_global_route, dgid, a_gid), F(struct ibv_global_route, flow_label, 'I'), F(struct ibv_global_route, sgid_index, 'B'),
    F(struct ibv_global_route, hop_limit, 'B'), F(struct ibv_global_route, traffic_class, 'B') };
static const struct agg a_grh = AGG(struct ibv_global_route, "ibv_global_route", 0, f_grh, 0);

static const struct field f_ah_attr[] = {
    NEST(struct ibv_ah_attr, grh, a_grh), F(struct ibv_ah_attr, dlid, 'S'), F(struct ibv_ah_attr, sl, 'B'),
    F(struct ibv_ah_attr, src_path_bits, 'B'), F(struct ibv_ah_attr, static_rate, 'B'), F(struct ibv_ah_attr, is_global, 'B'),
    F(struct ibv_ah_attr, port_num, 'B') };
static const struct agg a_ah_attr = AGG(struct ibv_ah_attr, "ibv_ah_attr", 0, f_ah_attr, 0);

static const struct field f_qp_attr[] = {
    F(struct ibv_qp_attr, qp_state, 'I'), F(struct ibv_qp_attr, cur_qp_state, 'I'), F(struct ibv_qp_attr, path_mtu, 'I'),
    F(struct ibv_qp_attr, qkey, 'I'), F(struct ibv_qp_attr, rq_psn, 'I'), F(struct ibv_qp_attr, sq_psn, 'I'),
    F(struct ibv_qp_attr, dest_qp_num, 'I'), F(struct ibv_qp_attr, qp_access_flags, 'I'), NEST(struct ibv_qp_attr, cap, a_qp_cap),
    NEST(struct ibv_qp_attr, ah_attr, a_ah_attr), F(struct ibv_qp_attr, pkey_index, 'S'), F(struct ibv_qp_attr, max_rd_atomic, 'B'),
    F(struct ibv_qp_attr, max_dest_rd_atomic, 'B'), F(struct ibv_qp_attr, min_rnr_timer, 'B'), F(struct ibv_qp_attr, port_num, 'B'),
    F(struct ibv_qp_attr, timeout, 'B'), F(struct ibv_qp_attr, retry_cnt, 'B'), F(struct ibv_qp_attr, rnr_retry, 'B') };
static const struct agg a_qp_attr = AGG(struct ibv_qp_attr, "ibv_qp_attr", 0, f_qp_attr, 1);

static const struct field f_port_attr[] = {
    F(struct ibv_port_attr, state, 'I'), F(struct ibv_port_attr, max_mtu, 'I'), F(struct ibv_port_attr, active_mtu, 'I'),
    F(struct ibv_port_attr, gid_tbl_len, 'I'), F(struct ibv_port_attr, lid, 'S'), F(struct ibv_port_attr, link_layer, 'B') };
static const struct agg a_port_attr = AGG(struct ibv_port_attr, "ibv_port_attr", 0, f_port_attr, 1);

/* What the fabric reads from the device when it opens: limits for every queue it sizes, and the capabilities that
 * differ between RNICs (atomic_cap; ATOMIC_WRITE and FLUSH in device_cap_flags_ex, see ERDA_DEVICE_* below). */
static const struct field f_device_attr[] = {
    F(struct ibv_device_attr, fw_ver, 'X'), F(struct ibv_device_attr, max_mr_size, 'J'), F(struct ibv_device_attr, vendor_id, 'I'),
    F(struct ibv_device_attr, vendor_part_id, 'I'), F(struct ibv_device_attr, hw_ver, 'I'), F(struct ibv_device_attr, max_qp, 'I'),
    F(struct ibv_device_attr, max_qp_wr, 'I'), F(struct ibv_device_attr, max_sge, 'I'), F(struct ibv_device_attr, max_cq, 'I'),
    F(struct ibv_device_attr, max_cqe, 'I'), F(struct ibv_device_attr, max_mr, 'I'), F(struct ibv_device_attr, max_qp_rd_atom, 'I'),
    F(struct ibv_device_attr, max_qp_init_rd_atom, 'I'), F(struct ibv_device_attr, atomic_cap, 'I') };
static const struct agg a_device_attr = AGG(struct ibv_device_attr, "ibv_device_attr", 0, f_device_attr, 1);

static const struct field f_device_attr_ex[] = {
    NEST(struct ibv_device_attr_ex, orig_attr, a_device_attr), F(struct ibv_device_attr_ex, comp_mask, 'I'),
    F(struct ibv_device_attr_ex, device_cap_flags_ex, 'J') };
static const struct agg a_device_attr_ex = AGG(struct ibv_device_attr_ex, "ibv_device_attr_ex", 0, f_device_attr_ex, 1);

static const struct field f_query_device_ex_input[] = { F(struct ibv_query_device_ex_input, comp_mask, 'I') };
static const struct agg a_query_device_ex_input =
    AGG(struct ibv_query_device_ex_input, "ibv_query_device_ex_input", 0, f_query_device_ex_input, 1);

typedef __typeof__(((struct ibv_send_wr *)0)->wr) send_wr_wr_t;
typedef __typeof__(((struct ibv_send_wr *)0)->wr.rdma) send_wr_rdma_t;
typedef __typeof__(((struct ibv_send_wr *)0)->wr.atomic) send_wr_atomic_t;
static const struct field f_wr_rdma[] = { F(send_wr_rdma_t, remote_addr, 'J'), F(send_wr_rdma_t, rkey, 'I') };
static const struct agg a_wr_rdma = AGG(send_wr_rdma_t, "rdma", 0, f_wr_rdma, 0);
static const struct field f_wr_atomic[] = {
    F(send_wr_atomic_t, remote_addr, 'J'), F(send_wr_atomic_t, compare_add, 'J'), F(send_wr_atomic_t, swap, 'J'), F(send_wr_atomic_t, rkey, 'I') };
static const struct agg a_wr_atomic = AGG(send_wr_atomic_t, "atomic", 0, f_wr_atomic, 0);
static const struct field f_wr_union[] = { NEST(send_wr_wr_t, rdma, a_wr_rdma), NEST(send_wr_wr_t, atomic, a_wr_atomic) };
static const struct agg a_wr_union = AGG(send_wr_wr_t, "wr", 1, f_wr_union, 0);

static const struct field f_send_wr[] = {
    F(struct ibv_send_wr, wr_id, 'J'), F(struct ibv_send_wr, next, 'A'), F(struct ibv_send_wr, sg_list, 'A'),
    F(struct ibv_send_wr, num_sge, 'I'), F(struct ibv_send_wr, opcode, 'I'), F(struct ibv_send_wr, send_flags, 'I'),
    F(struct ibv_send_wr, imm_data, 'I'), NEST(struct ibv_send_wr, wr, a_wr_union) };
static const struct agg a_send_wr = AGG(struct ibv_send_wr, "ibv_send_wr", 0, f_send_wr, 1);

static const struct field f_recv_wr[] = {
    F(struct ibv_recv_wr, wr_id, 'J'), F(struct ibv_recv_wr, next, 'A'), F(struct ibv_recv_wr, sg_list, 'A'), F(struct ibv_recv_wr, num_sge, 'I') };
static const struct agg a_recv_wr = AGG(struct ibv_recv_wr, "ibv_recv_wr", 0, f_recv_wr, 1);

static const struct field f_wc[] = {
    F(struct ibv_wc, wr_id, 'J'), F(struct ibv_wc, status, 'I'), F(struct ibv_wc, opcode, 'I'), F(struct ibv_wc, vendor_err, 'I'),
    F(struct ibv_wc, byte_len, 'I'), F(struct ibv_wc, imm_data, 'I'), F(struct ibv_wc, qp_num, 'I'), F(struct ibv_wc, src_qp, 'I'),
    F(struct ibv_wc, wc_flags, 'I'), F(struct ibv_wc, pkey_index, 'S'), F(struct ibv_wc, slid, 'S'), F(struct ibv_wc, sl, 'B'),
    F(struct ibv_wc, dlid_path_bits, 'B') };
static const struct agg a_wc = AGG(struct ibv_wc, "ibv_wc", 0, f_wc, 1);

static const struct field f_qp_ex[] = {
    NEST(struct ibv_qp_ex, qp_base, a_qp), F(struct ibv_qp_ex, comp_mask, 'J'), F(struct ibv_qp_ex, wr_id, 'J'),
    F(struct ibv_qp_ex, wr_flags, 'I'), F(struct ibv_qp_ex, wr_atomic_cmp_swp, 'A'), F(struct ibv_qp_ex, wr_atomic_fetch_add, 'A'),
    F(struct ibv_qp_ex, wr_rdma_read, 'A'), F(struct ibv_qp_ex, wr_rdma_write, 'A'), F(struct ibv_qp_ex, wr_rdma_write_imm, 'A'),
    F(struct ibv_qp_ex, wr_send, 'A'), F(struct ibv_qp_ex, wr_set_sge, 'A'), F(struct ibv_qp_ex, wr_start, 'A'),
    F(struct ibv_qp_ex, wr_complete, 'A'), F(struct ibv_qp_ex, wr_abort, 'A'), F(struct ibv_qp_ex, wr_atomic_write, 'A'),
#if ERDA_HAVE_WR_FLUSH
    F(struct ibv_qp_ex, wr_flush, 'A'),
#endif
};
static const struct agg a_qp_ex = AGG(struct ibv_qp_ex, "ibv_qp_ex", 0, f_qp_ex, 1);

/* ---------------------------------------------------------------- rdma_cma.h, netinet/in.h */
static const struct field f_sockaddr_in[] = {
    F(struct sockaddr_in, sin_family, 'S'), F(struct sockaddr_in, sin_port, 'S'), FN(struct sockaddr_in, sin_addr.s_addr, "sin_addr", 'I') };
static const struct agg a_sockaddr_in = AGG(struct sockaddr_in, "sockaddr_in", 0, f_sockaddr_in, 1);

static const struct field f_conn_param[] = {
    F(struct rdma_conn_param, private_data, 'A'), F(struct rdma_conn_param, private_data_len, 'B'),
    F(struct rdma_conn_param, responder_resources, 'B'), F(struct rdma_conn_param, initiator_depth, 'B'),
    F(struct rdma_conn_param, flow_control, 'B'), F(struct rdma_conn_param, retry_count, 'B'),
    F(struct rdma_conn_param, rnr_retry_count, 'B'), F(struct rdma_conn_param, srq, 'B'), F(struct rdma_conn_param, qp_num, 'I') };
static const struct agg a_conn_param = AGG(struct rdma_conn_param, "rdma_conn_param", 0, f_conn_param, 1);

typedef __typeof__(((struct rdma_cm_event *)0)->param) cm_event_param_t;
static const struct field f_cm_param[] = { NEST(cm_event_param_t, conn, a_conn_param) };
static const struct agg a_cm_param = AGG(cm_event_param_t, "param", 1, f_cm_param, 0);

static const struct field f_cm_event[] = {
    F(struct rdma_cm_event, id, 'A'), F(struct rdma_cm_event, listen_id, 'A'), F(struct rdma_cm_event, event, 'I'),
    F(struct rdma_cm_event, status, 'I'), NEST(struct rdma_cm_event, param, a_cm_param) };
static const struct agg a_cm_event = AGG(struct rdma_cm_event, "rdma_cm_event", 0, f_cm_event, 1);

/* rdma_get_peer_addr is a static inline of rdma_cma.h (&id->route.addr.dst_addr), not a symbol of librdmacm */
static const struct field f_cm_id[] = {
    F(struct rdma_cm_id, verbs, 'A'), F(struct rdma_cm_id, channel, 'A'), F(struct rdma_cm_id, context, 'A'), F(struct rdma_cm_id, qp, 'A'),
    FN(struct rdma_cm_id, route.addr.dst_addr, "route_addr_dst_addr", 'X'),
    F(struct rdma_cm_id, ps, 'I'), F(struct rdma_cm_id, port_num, 'B'), F(struct rdma_cm_id, send_cq, 'A'), F(struct rdma_cm_id, recv_cq, 'A'),
    F(struct rdma_cm_id, pd, 'A') };
static const struct agg a_cm_id = AGG(struct rdma_cm_id, "rdma_cm_id", 0, f_cm_id, 1);

static const struct field f_event_channel[] = { F(struct rdma_event_channel, fd, 'I') };
static const struct agg a_event_channel = AGG(struct rdma_event_channel, "rdma_event_channel", 0, f_event_channel, 1);

/* ---------------------------------------------------------------- constants */
struct constant { const char *name; long long value; };
#define C(x) { #x, (long long)(x) }

static const struct constant verbs_consts[] = {
    C(IBV_SYSFS_NAME_MAX),
    C(IBV_ACCESS_LOCAL_WRITE), C(IBV_ACCESS_REMOTE_WRITE), C(IBV_ACCESS_REMOTE_READ), C(IBV_ACCESS_REMOTE_ATOMIC),
    C(IBV_ACCESS_RELAXED_ORDERING),
#if ERDA_HAVE_WR_FLUSH
    C(IBV_ACCESS_FLUSH_GLOBAL), C(IBV_ACCESS_FLUSH_PERSISTENT),
#endif
    C(IBV_WR_RDMA_WRITE), C(IBV_WR_RDMA_WRITE_WITH_IMM), C(IBV_WR_SEND), C(IBV_WR_SEND_WITH_IMM), C(IBV_WR_RDMA_READ),
    C(IBV_WR_ATOMIC_CMP_AND_SWP), C(IBV_WR_ATOMIC_FETCH_AND_ADD), C(IBV_WR_ATOMIC_WRITE),
#if ERDA_HAVE_WR_FLUSH
    C(IBV_WR_FLUSH),
#endif
    C(IBV_SEND_FENCE), C(IBV_SEND_SIGNALED), C(IBV_SEND_SOLICITED), C(IBV_SEND_INLINE),
    C(IBV_WC_SEND), C(IBV_WC_RDMA_WRITE), C(IBV_WC_RDMA_READ), C(IBV_WC_COMP_SWAP), C(IBV_WC_FETCH_ADD), C(IBV_WC_BIND_MW),
    C(IBV_WC_LOCAL_INV), C(IBV_WC_ATOMIC_WRITE), C(IBV_WC_RECV), C(IBV_WC_RECV_RDMA_WITH_IMM),
#if ERDA_HAVE_WR_FLUSH
    C(IBV_WC_FLUSH),
#endif
    C(IBV_WC_WITH_IMM),
    C(IBV_WC_SUCCESS), C(IBV_WC_LOC_LEN_ERR), C(IBV_WC_LOC_QP_OP_ERR), C(IBV_WC_LOC_EEC_OP_ERR), C(IBV_WC_LOC_PROT_ERR),
    C(IBV_WC_WR_FLUSH_ERR), C(IBV_WC_MW_BIND_ERR), C(IBV_WC_BAD_RESP_ERR), C(IBV_WC_LOC_ACCESS_ERR), C(IBV_WC_REM_INV_REQ_ERR),
    C(IBV_WC_REM_ACCESS_ERR), C(IBV_WC_REM_OP_ERR), C(IBV_WC_RETRY_EXC_ERR), C(IBV_WC_RNR_RETRY_EXC_ERR),
    C(IBV_WC_LOC_RDD_VIOL_ERR), C(IBV_WC_REM_INV_RD_REQ_ERR), C(IBV_WC_REM_ABORT_ERR), C(IBV_WC_INV_EECN_ERR),
    C(IBV_WC_INV_EEC_STATE_ERR), C(IBV_WC_FATAL_ERR), C(IBV_WC_RESP_TIMEOUT_ERR), C(IBV_WC_GENERAL_ERR),
    C(IBV_QPS_RESET), C(IBV_QPS_INIT), C(IBV_QPS_RTR), C(IBV_QPS_RTS), C(IBV_QPS_SQD), C(IBV_QPS_SQE), C(IBV_QPS_ERR),
    C(IBV_QP_STATE), C(IBV_QP_CUR_STATE), C(IBV_QP_ACCESS_FLAGS), C(IBV_QP_PKEY_INDEX), C(IBV_QP_PORT), C(IBV_QP_QKEY),
    C(IBV_QP_AV), C(IBV_QP_PATH_MTU), C(IBV_QP_TIMEOUT), C(IBV_QP_RETRY_CNT), C(IBV_QP_RNR_RETRY), C(IBV_QP_RQ_PSN),
    C(IBV_QP_MAX_QP_RD_ATOMIC), C(IBV_QP_MIN_RNR_TIMER), C(IBV_QP_SQ_PSN), C(IBV_QP_MAX_DEST_RD_ATOMIC), C(IBV_QP_CAP),
    C(IBV_QP_DEST_QPN),
    C(IBV_QPT_RC), C(IBV_QPT_UC), C(IBV_QPT_UD),
    C(IBV_MTU_256), C(IBV_MTU_512), C(IBV_MTU_1024), C(IBV_MTU_2048), C(IBV_MTU_4096),
    C(IBV_PORT_DOWN), C(IBV_PORT_INIT), C(IBV_PORT_ARMED), C(IBV_PORT_ACTIVE),
    C(IBV_LINK_LAYER_UNSPECIFIED), C(IBV_LINK_LAYER_INFINIBAND), C(IBV_LINK_LAYER_ETHERNET),
    C(IBV_QP_INIT_ATTR_PD), C(IBV_QP_INIT_ATTR_SEND_OPS_FLAGS),
    C(IBV_QP_EX_WITH_RDMA_WRITE), C(IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM), C(IBV_QP_EX_WITH_SEND), C(IBV_QP_EX_WITH_RDMA_READ),
    C(IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP), C(IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD), C(IBV_QP_EX_WITH_ATOMIC_WRITE),
#if ERDA_HAVE_WR_FLUSH
    C(IBV_QP_EX_WITH_FLUSH), C(IBV_FLUSH_GLOBAL), C(IBV_FLUSH_PERSISTENT), C(IBV_FLUSH_RANGE), C(IBV_FLUSH_MR),
#endif
    { "ERDA_HAVE_WR_FLUSH", ERDA_HAVE_WR_FLUSH },
    /* The FLUSH names Java code needs whether or not the headers have them (Java has no #if): the header's value,
     * or -1 (offset) / 0 (flags) when the bindings were generated without FLUSH and the path is compiled out. */
#if ERDA_HAVE_WR_FLUSH
    { "ERDA_WR_FLUSH_OFFSET", (long long)offsetof(struct ibv_qp_ex, wr_flush) },
    { "ERDA_QP_EX_WITH_FLUSH", IBV_QP_EX_WITH_FLUSH }, { "ERDA_FLUSH_PERSISTENT", IBV_FLUSH_PERSISTENT },
    { "ERDA_FLUSH_RANGE", IBV_FLUSH_RANGE }, { "ERDA_ACCESS_FLUSH_PERSISTENT", IBV_ACCESS_FLUSH_PERSISTENT },
    { "ERDA_WC_FLUSH", IBV_WC_FLUSH },
#else
    { "ERDA_WR_FLUSH_OFFSET", -1 }, { "ERDA_QP_EX_WITH_FLUSH", 0 }, { "ERDA_FLUSH_PERSISTENT", 0 },
    { "ERDA_FLUSH_RANGE", 0 }, { "ERDA_ACCESS_FLUSH_PERSISTENT", 0 }, { "ERDA_WC_FLUSH", -1 },
#endif
    { "ERDA_VERBS_ABI_IS_EXTENDED", (long long)(intptr_t)__VERBS_ABI_IS_EXTENDED },
    C(IBV_ATOMIC_NONE), C(IBV_ATOMIC_HCA), C(IBV_ATOMIC_GLOB),
    /* device_cap_flags_ex bits of the kernel's uapi (rdma/ib_user_verbs.h, Linux >= 6.2) that rdma-core 44's headers
     * do not name yet; the kernel reports them through ibv_query_device_ex unchanged. Fixed by the kernel ABI. */
    { "ERDA_DEVICE_FLUSH_GLOBAL", 1LL << 38 }, { "ERDA_DEVICE_FLUSH_PERSISTENT", 1LL << 39 },
    { "ERDA_DEVICE_ATOMIC_WRITE", 1LL << 40 },
};

static const struct constant rdmacm_consts[] = {
    C(RDMA_CM_EVENT_ADDR_RESOLVED), C(RDMA_CM_EVENT_ADDR_ERROR), C(RDMA_CM_EVENT_ROUTE_RESOLVED), C(RDMA_CM_EVENT_ROUTE_ERROR),
    C(RDMA_CM_EVENT_CONNECT_REQUEST), C(RDMA_CM_EVENT_CONNECT_RESPONSE), C(RDMA_CM_EVENT_CONNECT_ERROR),
    C(RDMA_CM_EVENT_UNREACHABLE), C(RDMA_CM_EVENT_REJECTED), C(RDMA_CM_EVENT_ESTABLISHED), C(RDMA_CM_EVENT_DISCONNECTED),
    C(RDMA_CM_EVENT_DEVICE_REMOVAL), C(RDMA_CM_EVENT_MULTICAST_JOIN), C(RDMA_CM_EVENT_MULTICAST_ERROR),
    C(RDMA_CM_EVENT_ADDR_CHANGE), C(RDMA_CM_EVENT_TIMEWAIT_EXIT),
    C(RDMA_PS_TCP), C(RDMA_PS_UDP), C(AF_INET),
};

static const struct agg *const verbs_aggs[] = {
    &a_device, &a_context, &a_vctx, &a_comp_channel, &a_pd, &a_mr, &a_cq, &a_qp, &a_qp_cap, &a_qp_init_attr,
    &a_qp_init_attr_ex, &a_gid, &a_qp_attr, &a_port_attr, &a_device_attr, &a_device_attr_ex, &a_query_device_ex_input, &a_sge, &a_send_wr, &a_recv_wr, &a_wc, &a_qp_ex };
static const struct agg *const rdmacm_aggs[] = { &a_sockaddr_in, &a_event_channel, &a_conn_param, &a_cm_id, &a_cm_event };

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- --check */
static void check_fields(const struct agg *a, const char *prefix, size_t base) {
    for (size_t i = 0; i < a->nfields; i++) {
        const struct field *f = &a->fields[i];
        printf("offset %s.%s %zu\n", prefix, f->name, base + f->offset);
        if (f->kind == 'N') {
            char p[512];
            snprintf(p, sizeof p, "%s.%s", prefix, f->name);
            check_fields(f->nested, p, base + f->offset);
        }
    }
}

static void check(const struct agg *const *aggs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        printf("size %s %zu\n", aggs[i]->cname, aggs[i]->size);
        check_fields(aggs[i], aggs[i]->cname, 0);
    }
}

static void check_consts(const struct constant *cs, size_t n) {
    for (size_t i = 0; i < n; i++) printf("const %s %lld\n", cs[i].name, cs[i].value);
}

/* ---------------------------------------------------------------- --java */
static size_t kind_size(char k) {
    switch (k) { case 'B': return 1; case 'S': return 2; case 'I': return 4; case 'J': case 'A': return 8; default: return 0; }
}

static const char *kind_layout(char k) {
    switch (k) { case 'B': return "JAVA_BYTE"; case 'S': return "JAVA_SHORT"; case 'I': return "JAVA_INT"; case 'J': return "JAVA_LONG"; default: return "ADDRESS"; }
}

static void indent(int d) { for (int i = 0; i < d; i++) fputs("    ", stdout); }

static void emit_layout(const struct agg *a, int depth, size_t pad_to);

static void emit_member(const struct field *f, int depth) {
    indent(depth);
    if (f->kind == 'N' && f->nested->top) {
        /* jextract style: reuse the struct's own constant (emitted earlier, so initialised first). */
        printf("%s.withName(\"%s\")", f->nested->cname, f->name);
    } else if (f->kind == 'N') {
        emit_layout(f->nested, depth, f->nested->size);
        printf(".withName(\"%s\")", f->name);
    } else if (f->kind == 'X') {
        printf("MemoryLayout.sequenceLayout(%zu, JAVA_BYTE).withName(\"%s\")", f->size, f->name);
    } else {
        if (kind_size(f->kind) != f->size) {
            fprintf(stderr, "field %s: kind %c has %zu bytes but C has %zu\n", f->name, f->kind, kind_size(f->kind), f->size);
            exit(2);
        }
        printf("%s.withName(\"%s\")", kind_layout(f->kind), f->name);
    }
}

/* Emits a struct (padding between described fields, trailing padding up to pad_to, which is sizeof
 * or, for a union member, the union's size) or a union of named struct members. */
static void emit_layout(const struct agg *a, int depth, size_t pad_to) {
    printf("MemoryLayout.%s(\n", a->is_union ? "unionLayout" : "structLayout");
    size_t pos = 0;
    for (size_t i = 0; i < a->nfields; i++) {
        const struct field *f = &a->fields[i];
        if (a->is_union) {
            if (f->kind != 'N' || f->offset != 0) { fprintf(stderr, "%s.%s: union members must be structs\n", a->cname, f->name); exit(2); }
            indent(depth + 1);
            emit_layout(f->nested, depth + 1, a->size);
            printf(".withName(\"%s\")%s\n", f->name, i + 1 < a->nfields ? "," : "");
            continue;
        }
        if (f->offset < pos) { fprintf(stderr, "%s.%s overlaps the previous field\n", a->cname, f->name); exit(2); }
        if (f->offset > pos) indent(depth + 1), printf("MemoryLayout.paddingLayout(%zu),\n", f->offset - pos);
        emit_member(f, depth + 1);
        pos = f->offset + f->size;
        printf("%s\n", (i + 1 < a->nfields || pos < pad_to) ? "," : "");
    }
    if (!a->is_union && pos < pad_to) indent(depth + 1), printf("MemoryLayout.paddingLayout(%zu)\n", pad_to - pos);
    indent(depth);
    printf(")");
}

static void emit_fields(const struct agg *top, const struct agg *a, const char *jprefix, const char *path,
                        const char *cpath, size_t base) {
    for (size_t i = 0; i < a->nfields; i++) {
        const struct field *f = &a->fields[i];
        char jname[256], p[1024], cp[512];
        snprintf(jname, sizeof jname, "%s$%s", jprefix, f->name);
        snprintf(p, sizeof p, "%s%sgroupElement(\"%s\")", path, *path ? ", " : "", f->name);
        snprintf(cp, sizeof cp, "%s%s%s", cpath, *cpath ? "." : "", f->name);
        printf("    /** offsetof(%s, %s) */\n", top->cname, cp);
        printf("    public static final long %s$OFFSET = %zu;\n", jname, base + f->offset);
        if (f->kind == 'N') {
            emit_fields(top, f->nested, jname, p, cp, base + f->offset);
        } else if (f->kind != 'X') {
            printf("    public static final VarHandle %s = %s.varHandle(%s);\n", jname, top->cname, p);
        }
    }
}

static void emit_java(const char *cls, const char *pkg, const char *header, const struct agg *const *aggs, size_t n,
                      const struct constant *cs, size_t nc) {
    printf("// GENERATED by scripts/gen-verbs-layouts.sh from erda-ffm-bindings/src/main/c/verbs_layouts.c\n");
    printf("// against %s. Do not edit: change the C program and regenerate\n", header);
    printf("// (scripts/gen-verbs-layouts.sh); LayoutConformanceTest fails when this file and the installed headers drift.\n");
    printf("package %s;\n\n", pkg);
    printf("import static java.lang.foreign.ValueLayout.ADDRESS;\n");
    printf("import static java.lang.foreign.ValueLayout.JAVA_BYTE;\n");
    printf("import static java.lang.foreign.ValueLayout.JAVA_INT;\n");
    printf("import static java.lang.foreign.ValueLayout.JAVA_LONG;\n");
    printf("import static java.lang.foreign.ValueLayout.JAVA_SHORT;\n");
    printf("import static java.lang.foreign.MemoryLayout.PathElement.groupElement;\n\n");
    printf("import java.lang.foreign.MemoryLayout;\n");
    printf("import java.lang.foreign.StructLayout;\n");
    printf("import java.lang.invoke.VarHandle;\n\n");
    printf("/**\n * Layouts and constants of {@code %s} (x86_64 LP64), in the style of jextract: one\n", header);
    printf(" * {@link StructLayout} per C struct (undescribed fields are padding, sizes are the full sizeof),\n");
    printf(" * named as in C (lowercase, so never clashing with the uppercase enum/#define constants),\n");
    printf(" * and per field {@code struct$field} (a {@link VarHandle}, coordinates: segment, base offset)\n");
    printf(" * and {@code struct$field$OFFSET}; nested fields chain: {@code ibv_send_wr$wr$rdma$rkey}.\n");
    printf(" * Loading this class touches no native code.\n */\n");
    printf("@SuppressWarnings(\"unused\")\n");
    printf("public final class %s {\n    private %s() {}\n", cls, cls);
    for (size_t i = 0; i < nc; i++) {
        int fits = cs[i].value >= -2147483648LL && cs[i].value <= 2147483647LL;
        printf("\n    public static final %s %s = %lld%s;", fits ? "int" : "long", cs[i].name, cs[i].value, fits ? "" : "L");
    }
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        const struct agg *a = aggs[i];
        printf("\n    /** {@code %s%s}, %zu bytes. */\n", a->is_union ? "union " : "struct ", a->cname, a->size);
        printf("    public static final StructLayout %s = ", a->cname);
        emit_layout(a, 1, a->size);
        printf(".withName(\"%s\");\n", a->cname);
        emit_fields(a, a, a->cname, "", "", 0);
    }
    printf("}\n");
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "--check") == 0) {
        check(verbs_aggs, COUNT(verbs_aggs));
        check(rdmacm_aggs, COUNT(rdmacm_aggs));
        check_consts(verbs_consts, COUNT(verbs_consts));
        check_consts(rdmacm_consts, COUNT(rdmacm_consts));
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "--java") == 0 && strcmp(argv[2], "Verbs") == 0) {
        emit_java("Verbs", "io.erda.ffm.verbs", "<infiniband/verbs.h>", verbs_aggs, COUNT(verbs_aggs), verbs_consts, COUNT(verbs_consts));
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "--java") == 0 && strcmp(argv[2], "RdmaCma") == 0) {
        emit_java("RdmaCma", "io.erda.ffm.rdmacm", "<rdma/rdma_cma.h> and <netinet/in.h>", rdmacm_aggs, COUNT(rdmacm_aggs), rdmacm_consts, COUNT(rdmacm_consts));
        return 0;
    }
    fprintf(stderr, "usage: %s --check | --java Verbs | --java RdmaCma\n", argv[0]);
    return 64;
}
