package io.erda.fabric.emulated;

import static org.assertj.core.api.Assertions.assertThat;

import io.erda.fabric.Access;
import io.erda.fabric.Opcode;
import io.erda.fabric.Status;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link RegionTable#admit} (the allocation-free path of every one-sided access) agrees with {@link RegionTable#check}. */
class RegionTableTest {
    private record Region(long address, long length, Set<Access> access) implements RegionTable.Entry {
        @Override
        public boolean allows(Access a) {
            return access.contains(a);
        }
    }

    private final RegionTable<Region> table = new RegionTable<>(0x100);
    private final int readWrite = table.newKey();
    private final int readOnly = table.newKey();
    private final Region rw = new Region(0x10000, 4096, EnumSet.of(Access.REMOTE_READ, Access.REMOTE_WRITE,
            Access.REMOTE_ATOMIC));
    private final Region ro = new Region(0x20000, 4096, EnumSet.of(Access.REMOTE_READ));

    RegionTableTest() {
        table.put(readWrite, rw);
        table.put(readOnly, ro);
    }

    @Test
    void admitsWhatPassesEveryCheck() {
        assertAdmitted(Opcode.READ, 0x10000, 4096, readWrite, rw);
        assertAdmitted(Opcode.WRITE, 0x10ff0, 16, readWrite, rw);
        assertAdmitted(Opcode.CAS, 0x10008, 8, readWrite, rw);
        assertAdmitted(Opcode.READ, 0x20000, 0, readOnly, ro);
        assertAdmitted(Opcode.READ, 0x21000, 0, readOnly, ro); // empty, at the end
    }

    @Test
    void refusesEachFailingCheckAndCheckSaysWhich() {
        assertRefused(Opcode.READ, 0x10000, 8, 0x7777, Status.REMOTE_ACCESS_ERROR, "rkey 0x7777 unknown");
        assertRefused(Opcode.READ, 0x10ff9, 8, readWrite, Status.REMOTE_ACCESS_ERROR, "outside region");
        assertRefused(Opcode.READ, 0xfff8, 8, readWrite, Status.REMOTE_ACCESS_ERROR, "outside region");
        assertRefused(Opcode.READ, 0x10000, -1, readWrite, Status.REMOTE_ACCESS_ERROR, "outside region");
        assertRefused(Opcode.WRITE, 0x20000, 8, readOnly, Status.REMOTE_ACCESS_ERROR, "WRITE needs REMOTE_WRITE");
        assertRefused(Opcode.FETCH_ADD, 0x20000, 8, readOnly, Status.REMOTE_ACCESS_ERROR, "needs REMOTE_ATOMIC");
        assertRefused(Opcode.CAS, 0x10004, 8, readWrite, Status.REMOTE_INVALID_REQUEST, "not 8-byte aligned");
    }

    @Test
    void aRemovedRegionIsNoLongerAdmitted() {
        assertThat(table.remove(readOnly)).isSameAs(ro);
        assertRefused(Opcode.READ, 0x20000, 8, readOnly, Status.REMOTE_ACCESS_ERROR, "unknown");
        assertThat(table.all()).containsExactly(rw);
    }

    private void assertAdmitted(Opcode op, long address, long length, int rkey, Region expected) {
        assertThat(table.admit(op, address, length, rkey)).as("%s at 0x%x +%d", op, address, length).isSameAs(expected);
        RegionTable.Check<Region> check = table.check(op, address, length, rkey);
        assertThat(check.ok()).isTrue();
        assertThat(check.region()).isSameAs(expected);
    }

    private void assertRefused(Opcode op, long address, long length, int rkey, Status status, String detail) {
        assertThat(table.admit(op, address, length, rkey)).as("%s at 0x%x +%d", op, address, length).isNull();
        RegionTable.Check<Region> check = table.check(op, address, length, rkey);
        assertThat(check.status()).isEqualTo(status);
        assertThat(check.detail()).contains(detail);
    }
}
