package org.uniheap.test;

import org.uniheap.PObject;
import org.uniheap.Persistent;

/** A binary tree node (a typed reference to its own class). */
@Persistent("jt.TreeNode")
public interface TreeNode extends PObject {
    long value();
    void value(long v);
    TreeNode left();
    void left(TreeNode n);
    TreeNode right();
    void right(TreeNode n);
}
