package io.weir.controlplane.taskshare;

import io.weir.protocol.TaskShareConfig;
import io.weir.protocol.TaskShareConfig.Curve;
import io.weir.protocol.TaskShareConfig.DynamicShare;
import jakarta.persistence.Column;
import jakarta.persistence.Embeddable;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;

/**
 * One task's CPU share inside a {@link TaskShareSet}: a row of {@code task_share}. The dynamic
 * columns are all null for a static share, all set for a dynamic one.
 */
@Embeddable
class TaskShareEntry {

    @Column(nullable = false, length = 63)
    private String name;

    @Column(nullable = false)
    private int share;

    @Column(name = "dynamic_t1")
    private Double dynamicT1;

    @Column(name = "dynamic_t2")
    private Double dynamicT2;

    @Column(name = "dynamic_low")
    private Integer dynamicLow;

    @Column(name = "dynamic_high")
    private Integer dynamicHigh;

    @Enumerated(EnumType.STRING)
    @Column(name = "dynamic_curve", length = 16)
    private Curve dynamicCurve;

    protected TaskShareEntry() {
    }

    static TaskShareEntry of(TaskShareConfig config) {
        TaskShareEntry entry = new TaskShareEntry();
        entry.name = config.name();
        entry.share = config.share();
        DynamicShare dynamic = config.dynamic();
        if (dynamic != null) {
            entry.dynamicT1 = dynamic.t1();
            entry.dynamicT2 = dynamic.t2();
            entry.dynamicLow = dynamic.low();
            entry.dynamicHigh = dynamic.high();
            entry.dynamicCurve = dynamic.curve();
        }
        return entry;
    }

    TaskShareConfig toConfig() {
        DynamicShare dynamic = dynamicCurve == null ? null
                : new DynamicShare(dynamicT1, dynamicT2, dynamicLow, dynamicHigh, dynamicCurve);
        return new TaskShareConfig(name, share, dynamic);
    }
}
