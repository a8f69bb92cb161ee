package io.erda.softrnic;

/** One ibv_modify_qp call as the fake saw it (fields not in {@code mask} are whatever the caller left). */
public record QpTransition(int qpNum, int mask, int state, int destQpNum, int rqPsn, int sqPsn, int dlid,
                           int accessFlags, int port) {}
