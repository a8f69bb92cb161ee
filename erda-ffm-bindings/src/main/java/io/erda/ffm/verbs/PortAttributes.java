package io.erda.ffm.verbs;

import java.lang.foreign.MemorySegment;

/** The fields of {@code struct ibv_port_attr} a connection needs. */
public record PortAttributes(int state, int maxMtu, int activeMtu, int gidTableLength, int lid, int linkLayer) {
    public static PortAttributes decode(MemorySegment attr) {
        return new PortAttributes(
                (int) Verbs.ibv_port_attr$state.get(attr, 0L),
                (int) Verbs.ibv_port_attr$max_mtu.get(attr, 0L),
                (int) Verbs.ibv_port_attr$active_mtu.get(attr, 0L),
                (int) Verbs.ibv_port_attr$gid_tbl_len.get(attr, 0L),
                Short.toUnsignedInt((short) Verbs.ibv_port_attr$lid.get(attr, 0L)),
                Byte.toUnsignedInt((byte) Verbs.ibv_port_attr$link_layer.get(attr, 0L)));
    }

    /** RoCE ports have no LID; their peers are addressed by GID (is_global). */
    public boolean isEthernet() {
        return linkLayer == Verbs.IBV_LINK_LAYER_ETHERNET;
    }
}
