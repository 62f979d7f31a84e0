package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CostModelTest {

    @Test
    void theLinearModelChargesTheFixedCostOfItsKindPlusTheBytesAboveTheFloor() {
        CostModel model = CostModel.linear(30 << 10, 154 << 10, 4096);
        assertThat(model.cost(IoKind.READ, 4096)).isEqualTo((30 << 10) + 4096);
        assertThat(model.cost(IoKind.READ, 64 << 10)).isEqualTo((30 << 10) + (64 << 10));
        assertThat(model.cost(IoKind.WRITE, 4096)).isEqualTo((154 << 10) + 4096);
        assertThat(model.cost(IoKind.REPLICA, 4096)).as("what a copy applies for its primary, as a write")
                .isEqualTo((154 << 10) + 4096);
        assertThat((double) model.cost(IoKind.READ, 64 << 10) / model.cost(IoKind.READ, 4096))
                .as("a 64 KiB read against a 4 KiB one: 16x in bytes, 2.8x in cost").isCloseTo(2.76, org.assertj.core.api.Assertions.within(0.01));
        assertThat(CostModel.linear(100, 100, 4096).cost(IoKind.READ, 0)).as("the floor").isEqualTo(4096);
        assertThat(CostModel.linear(0, 0, 0).cost(IoKind.READ, 0)).as("never free").isEqualTo(1);
    }

    @Test
    void withoutAFixedCostTheModelIsBytesWithTheDefaultFloorSharedByEveryone() {
        assertThat(CostModel.bytes(CostModel.DEFAULT_MIN_CHARGE_BYTES)).isSameAs(CostModel.bytes());
        assertThat(CostModel.bytes().cost(IoKind.WRITE, 512)).isEqualTo(4096);
        assertThat(CostModel.bytes().cost(IoKind.WRITE, 1 << 20)).isEqualTo(1 << 20);
    }

    @Test
    void aNegativeParameterIsRefused() {
        assertThatThrownBy(() -> CostModel.linear(-1, 0, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("read -1");
    }
}
